//! Beam search: keep the `width` most probable partial sequences instead of one.
//!
//! A hypothesis is a sequence of generated tokens (the prompt is not part of it) with
//! `log_prob`, the sum of the model's log-probabilities of its tokens. Each step:
//!
//! 1. every live hypothesis is extended by every token: `log_prob + log p(token | prefix)`;
//! 2. the candidates are ranked by log_prob (ties: lower parent index, then lower token id);
//! 3. walking down the ranking, a candidate that ends in `<eos>` leaves the beam as a
//!    *finished* hypothesis if it ranks among the first `width` candidates (below that it
//!    could never have been in the beam); any other candidate becomes live until `width`
//!    live hypotheses are found.
//!
//! Finished hypotheses are compared by their **score**, `log_prob / lp(len)`, where len
//! counts the generated tokens including the final `<eos>` and lp is the length penalty
//! (see [`LengthPenalty`]): without it, beam search prefers short outputs, because every
//! extra token can only lower log_prob.
//!
//! **Stopping.** When the token budget is spent, the live hypotheses are finished as
//! they are (without `<eos>`). Before that, the search stops as soon as the best
//! finished score is at least the best score any live hypothesis could still reach:
//! a live hypothesis of length l can only lose log-probability, so its final score is at
//! most `max(log_prob / lp(l+1), log_prob / lp(budget))` (lp is monotonic in the length).
//! This bound never stops too early, so with a beam wide enough to hold every candidate
//! the result is the exhaustive optimum.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::generate::sampling::{check_logits, log_softmax};

/// How a hypothesis's length divides its log-probability.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LengthPenalty {
    /// lp = 1: raw log-probabilities.
    None,
    /// lp = ((5 + len) / 6)^α, from Google's NMT system (Wu et al. 2016); α ≈ 0.6–1.
    Gnmt { alpha: f64 },
    /// lp = len^α: α = 1 is the mean log-probability per token.
    Power { alpha: f64 },
}

impl LengthPenalty {
    /// lp(len) for a hypothesis of `len` ≥ 1 generated tokens.
    pub fn factor(&self, len: usize) -> f64 {
        let len = len as f64;
        match *self {
            LengthPenalty::None => 1.0,
            LengthPenalty::Gnmt { alpha } => ((5.0 + len) / 6.0).powf(alpha),
            LengthPenalty::Power { alpha } => len.powf(alpha),
        }
    }

    /// `log_prob / lp(len)`: what hypotheses are compared by.
    pub fn score(&self, log_prob: f64, len: usize) -> f64 {
        log_prob / self.factor(len)
    }

    pub fn validate(&self) -> Result<()> {
        match *self {
            LengthPenalty::None => Ok(()),
            LengthPenalty::Gnmt { alpha } | LengthPenalty::Power { alpha } => {
                if alpha.is_finite() {
                    Ok(())
                } else {
                    Err(Error::Input(format!(
                        "length penalty α must be a finite number, got {alpha}"
                    )))
                }
            }
        }
    }
}

/// Why a finished hypothesis ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// It chose `<eos>` (the last token).
    Eos,
    /// The token budget ran out.
    Budget,
}

/// One partial or finished sequence of the beam.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct Hypothesis {
    /// Generated tokens, prompt excluded; ends with `<eos>` when `ending` is `Eos`.
    pub tokens: Vec<u32>,
    /// Sum of the model's log-probabilities of `tokens`.
    pub log_prob: f64,
    /// `log_prob / lp(tokens.len())`.
    pub score: f64,
    /// Index of the hypothesis it extends in the previous step's live list (`None` for
    /// the empty root): the edges of the beam tree.
    pub parent: Option<usize>,
    /// `None` while live.
    pub ending: Option<Ending>,
}

/// What one step of the search did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BeamAdvance {
    /// The new live hypotheses, best first; `parent` indexes the previous live list.
    pub live: Vec<Hypothesis>,
    /// Hypotheses that finished in this step, best first.
    pub newly_finished: Vec<Hypothesis>,
    /// The best extensions that did not make it into the beam (at most `width`, best
    /// first; `parent` as above): the branches the search cut off this step.
    pub pruned: Vec<Hypothesis>,
    /// The search is over; [`BeamSearch::best`] is the answer.
    pub done: bool,
}

/// The beam search state machine. It knows nothing about models: the caller runs the
/// model on each live hypothesis and hands the logits to [`BeamSearch::advance`].
#[derive(Clone, Debug)]
pub struct BeamSearch {
    width: usize,
    penalty: LengthPenalty,
    eos: u32,
    budget: usize,
    steps: usize,
    live: Vec<Hypothesis>,
    finished: Vec<Hypothesis>,
    done: bool,
}

impl BeamSearch {
    /// A search from the empty hypothesis that generates at most `budget` tokens.
    pub fn new(width: usize, penalty: LengthPenalty, eos: u32, budget: usize) -> Result<Self> {
        if width == 0 {
            return Err(Error::Input("beam width must be at least 1, got 0".into()));
        }
        if budget == 0 {
            return Err(Error::Input(
                "beam search needs a budget of at least one token".into(),
            ));
        }
        penalty.validate()?;
        Ok(BeamSearch {
            width,
            penalty,
            eos,
            budget,
            steps: 0,
            live: vec![Hypothesis {
                tokens: vec![],
                log_prob: 0.0,
                score: 0.0,
                parent: None,
                ending: None,
            }],
            finished: vec![],
            done: false,
        })
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn penalty(&self) -> LengthPenalty {
        self.penalty
    }

    /// The hypotheses waiting for their next token, best first.
    pub fn live(&self) -> &[Hypothesis] {
        &self.live
    }

    /// Every finished hypothesis so far, best score first.
    pub fn finished(&self) -> &[Hypothesis] {
        &self.finished
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Steps taken so far (= length of every live hypothesis).
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The best finished hypothesis (ties: the one that finished first).
    pub fn best(&self) -> Option<&Hypothesis> {
        self.finished.first()
    }

    /// Extend every live hypothesis with the model's next-token logits, `logits[i]`
    /// (V values) belonging to `live()[i]`.
    pub fn advance(&mut self, logits: &[&[f32]]) -> Result<BeamAdvance> {
        if self.done {
            return Err(Error::Other("beam search is already finished".into()));
        }
        if logits.len() != self.live.len() {
            return Err(Error::Other(format!(
                "beam search has {} live hypotheses but got logits for {}",
                self.live.len(),
                logits.len()
            )));
        }
        // (parent, token, log_prob) for every extension that is possible at all.
        let mut cands: Vec<(usize, u32, f64)> = Vec::new();
        for (parent, (hyp, l)) in self.live.iter().zip(logits).enumerate() {
            check_logits(l)?;
            let lp = log_softmax(l); // (V)
            for (tok, &x) in lp.iter().enumerate() {
                if x > f64::NEG_INFINITY {
                    cands.push((parent, tok as u32, hyp.log_prob + x));
                }
            }
        }
        // Stable sort on log_prob keeps equal candidates in (parent, token) order.
        crate::sorting::sort_by(&mut cands, |a, b| b.2.total_cmp(&a.2));

        self.steps += 1;
        let len = self.steps;
        let mut live = Vec::with_capacity(self.width);
        let mut newly_finished = Vec::new();
        let mut pruned = Vec::new();
        for (rank, &(parent, tok, log_prob)) in cands.iter().enumerate() {
            let is_eos = tok == self.eos;
            let hyp = || {
                let mut tokens = self.live[parent].tokens.clone();
                tokens.push(tok);
                Hypothesis {
                    tokens,
                    log_prob,
                    score: self.penalty.score(log_prob, len),
                    parent: Some(parent),
                    ending: None,
                }
            };
            if (is_eos && rank >= self.width) || (!is_eos && live.len() == self.width) {
                // Cut off: kept only to be drawn, the best `width` of them.
                if pruned.len() < self.width {
                    pruned.push(hyp());
                }
                if rank >= self.width && live.len() == self.width && pruned.len() == self.width {
                    break;
                }
                continue;
            }
            let hyp = Hypothesis {
                ending: is_eos.then_some(Ending::Eos),
                ..hyp()
            };
            if is_eos {
                newly_finished.push(hyp);
            } else {
                live.push(hyp);
            }
        }
        if len == self.budget {
            // The budget is spent: what is still live finishes as it is.
            for h in live.drain(..) {
                newly_finished.push(Hypothesis {
                    ending: Some(Ending::Budget),
                    ..h
                });
            }
        }
        sort_by_score(&mut newly_finished);
        self.finished.extend(newly_finished.iter().cloned());
        sort_by_score(&mut self.finished);
        self.live = live.clone();
        self.done = self.live.is_empty() || self.best_finished_beats_every_live();
        Ok(BeamAdvance {
            live,
            newly_finished,
            pruned,
            done: self.done,
        })
    }

    /// The highest score a live hypothesis of the current length could still reach.
    fn live_bound(&self, h: &Hypothesis) -> f64 {
        let l = h.tokens.len();
        let next = self.penalty.score(h.log_prob, l + 1);
        let last = self.penalty.score(h.log_prob, self.budget);
        next.max(last)
    }

    fn best_finished_beats_every_live(&self) -> bool {
        let Some(best) = self.best() else {
            return false;
        };
        self.live.iter().all(|h| best.score >= self.live_bound(h))
    }
}

/// Best score first; equal scores keep their order.
fn sort_by_score(hyps: &mut [Hypothesis]) {
    crate::sorting::sort_by(hyps, |a, b| b.score.total_cmp(&a.score));
}

#[cfg(test)]
mod tests {
    use super::*;

    const EOS: u32 = 2;

    /// Logits whose softmax is exactly `probs` (up to f32 rounding).
    fn logits(probs: &[f64]) -> Vec<f32> {
        probs.iter().map(|&p| p.ln() as f32).collect()
    }

    #[test]
    fn length_penalties_follow_their_formulas() {
        let g = LengthPenalty::Gnmt { alpha: 0.6 };
        assert!((g.factor(1) - 1.0).abs() < 1e-12);
        assert!((g.factor(7) - 2f64.powf(0.6)).abs() < 1e-12);
        let p = LengthPenalty::Power { alpha: 1.0 };
        assert!((p.score(-6.0, 3) + 2.0).abs() < 1e-12);
        assert_eq!(LengthPenalty::None.score(-6.0, 3), -6.0);
        assert!(LengthPenalty::Power { alpha: f64::NAN }.validate().is_err());
    }

    #[test]
    fn width_and_budget_must_be_positive() {
        assert!(BeamSearch::new(0, LengthPenalty::None, EOS, 5).is_err());
        assert!(BeamSearch::new(2, LengthPenalty::None, EOS, 0).is_err());
    }

    /// The classic case where greedy fails: the first token's best choice leads to a
    /// flat continuation, the runner-up to a confident one.
    ///   step 1: a 0.5, b 0.4, eos 0.1
    ///   after a: every next token ≈ 0.25 (eos 0.25) → best a·eos = 0.5·0.25 = 0.125
    ///   after b: eos 0.9                          → b·eos = 0.4·0.9 = 0.36
    #[test]
    fn width_two_finds_what_greedy_misses() {
        // tokens: 0 pad, 1 bos, 2 eos, 3 a, 4 b
        let first = logits(&[1e-9, 1e-9, 0.1, 0.5, 0.4]);
        let after_a = logits(&[0.25, 0.25, 0.25, 0.125, 0.125]);
        let after_b = logits(&[0.025, 0.025, 0.9, 0.025, 0.025]);
        let run = |width: usize| {
            let mut bs = BeamSearch::new(width, LengthPenalty::None, EOS, 2).unwrap();
            bs.advance(&[&first]).unwrap();
            let next: Vec<&[f32]> = bs
                .live()
                .iter()
                .map(|h| {
                    if h.tokens == [3] {
                        &after_a[..]
                    } else {
                        &after_b[..]
                    }
                })
                .collect();
            let adv = bs.advance(&next).unwrap();
            assert!(adv.done);
            bs.best().unwrap().clone()
        };
        let greedy = run(1);
        assert_eq!(
            greedy.tokens,
            vec![3, 0],
            "width 1 follows a, then pad (first of the ties)"
        );
        let beam = run(2);
        assert_eq!(beam.tokens, vec![4, EOS]);
        assert_eq!(beam.ending, Some(Ending::Eos));
        assert!((beam.log_prob - (0.4f64 * 0.9).ln()).abs() < 1e-6);
    }

    #[test]
    fn eos_hypotheses_leave_the_beam_and_the_search_stops_when_they_win() {
        // eos has 0.9: it finishes at once; the live ones (≤ 0.05 each) cannot catch up
        // without a length penalty, so the search stops after one step.
        let first = logits(&[0.025, 0.025, 0.9, 0.025, 0.025]);
        let mut bs = BeamSearch::new(3, LengthPenalty::None, EOS, 10).unwrap();
        let adv = bs.advance(&[&first]).unwrap();
        assert_eq!(adv.newly_finished.len(), 1);
        assert_eq!(adv.newly_finished[0].tokens, vec![EOS]);
        assert_eq!(adv.live.len(), 3);
        assert!(adv.live.iter().all(|h| h.tokens != [EOS]));
        assert!(adv.done);
    }

    #[test]
    fn a_strong_length_penalty_keeps_searching_past_an_early_eos() {
        // With lp = len², a live hypothesis of log_prob ln 0.025 ≈ −3.7 at length 1 could
        // reach −3.7 / 100 at length 10, better than the finished ln 0.9: the search goes on.
        let first = logits(&[0.025, 0.025, 0.9, 0.025, 0.025]);
        let mut bs = BeamSearch::new(3, LengthPenalty::Power { alpha: 2.0 }, EOS, 10).unwrap();
        let adv = bs.advance(&[&first]).unwrap();
        assert!(!adv.done);
        assert_eq!(bs.live().len(), 3);
    }

    #[test]
    fn the_budget_finishes_live_hypotheses_without_eos() {
        let l = logits(&[0.1, 0.1, 0.1, 0.4, 0.3]);
        let mut bs = BeamSearch::new(2, LengthPenalty::None, EOS, 2).unwrap();
        bs.advance(&[&l]).unwrap();
        let adv = bs.advance(&[&l, &l]).unwrap();
        assert!(adv.done && bs.live().is_empty());
        let best = bs.best().unwrap();
        assert_eq!(best.tokens, vec![3, 3]);
        assert_eq!(best.ending, Some(Ending::Budget));
        assert!(
            bs.advance(&[]).is_err(),
            "a finished search takes no more steps"
        );
    }

    #[test]
    fn parents_point_into_the_previous_live_list() {
        let l = logits(&[0.05, 0.05, 0.1, 0.5, 0.3]);
        let mut bs = BeamSearch::new(2, LengthPenalty::None, EOS, 5).unwrap();
        bs.advance(&[&l]).unwrap();
        let before: Vec<Vec<u32>> = bs.live().iter().map(|h| h.tokens.clone()).collect();
        let adv = bs.advance(&[&l, &l]).unwrap();
        for h in &adv.live {
            let p = h.parent.unwrap();
            assert_eq!(h.tokens[..h.tokens.len() - 1], before[p][..]);
        }
    }

    #[test]
    fn logits_count_must_match_live_hypotheses() {
        let l = logits(&[0.2; 5]);
        let mut bs = BeamSearch::new(2, LengthPenalty::None, EOS, 5).unwrap();
        let e = bs.advance(&[&l, &l]).unwrap_err().to_string();
        assert!(e.contains("1 live"), "{e}");
    }
}
