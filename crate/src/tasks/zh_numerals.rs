//! Chinese numerals to digits, for an encoder-decoder, one character per token:
//! `三百一十二` → `312`, `一万零五` → `10005`. The encoder reads the numeral; the decoder
//! starts from `<bos>` and writes one digit per step, then `<eos>`. Cross-attention shows
//! which character each digit comes from — and that the zeros of `10005` come from a
//! single 零.
//!
//! How a number below a million is written (the standard reading):
//! - place units 十 (10), 百 (100), 千 (1000) within a group of four digits, and 万
//!   (10 000) after the upper group: 12345 = 一万二千三百四十五;
//! - a run of zeros between written digits is read as one 零 (105 = 一百零五,
//!   1001 = 一千零一, 10005 = 一万零五); zeros at the end are not read (1200 = 一千二百);
//!   a zero just before 万 is not read either, 万 closes its group (101000 = 十万一千,
//!   but 100500 = 十万零五百);
//! - a number that starts with 1 in the tens place drops the 一 (十, 十二, 十万);
//!   elsewhere it stays (一百一十, 一千零一十);
//! - digits are written 零一二三四五六七八九;
//! - a 2 just before 百 or 千, and a 2 that is the whole group before 万, is usually read
//!   两 (两百, 两千, 一万两千, 两千两百, 两万): [`numeral_liang`] writes that reading, and
//!   training draws both readings of such a number with the same digits. Elsewhere 2 is
//!   always 二: 二十, 十二, 一百零二, 二十二万 (never 两十, 十两, 二十两万).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::{encode_known, split_of, Example, Metric, Split, Task};
use crate::config::Arch;
use crate::tokenizer::Tokenizer;

/// Numbers have 1..=MAX_DIGITS digits.
pub const MAX_DIGITS: u32 = 6;

const DIGITS: [char; 10] = ['零', '一', '二', '三', '四', '五', '六', '七', '八', '九'];
/// The unit of each place within a group of four digits (ones, tens, hundreds, thousands).
const UNITS: [Option<char>; 4] = [None, Some('十'), Some('百'), Some('千')];
const TEN_THOUSAND: char = '万';
/// 2 as it is read before 百, 千 and a lone 万.
const LIANG: char = '两';

/// The Chinese numeral for `n` (0 ≤ n < 10^8), every 2 read 二.
pub fn numeral(n: u32) -> String {
    write_numeral(n, false)
}

/// The reading of `n` with 两 wherever Chinese reads 2 that way (before 百 and 千, and a
/// group of 2 before 万); `None` when there is no such 2 (then [`numeral`] is the only
/// reading).
pub fn numeral_liang(n: u32) -> Option<String> {
    let s = write_numeral(n, true);
    s.contains(LIANG).then_some(s)
}

/// Every reading of `n` the task writes: [`numeral`], then [`numeral_liang`] if there is one.
pub fn readings(n: u32) -> Vec<String> {
    let mut out = vec![numeral(n)];
    out.extend(numeral_liang(n));
    out
}

fn write_numeral(n: u32, liang: bool) -> String {
    assert!(n < 100_000_000, "{n} needs 亿");
    if n == 0 {
        return DIGITS[0].to_string();
    }
    let upper = n / 10_000;
    let mut out = String::new();
    let mut zero_pending = false;
    // Places from the highest (7: ten millions) down to 0 (ones).
    for place in (0..8).rev() {
        let d = (n / 10u32.pow(place)) % 10;
        if d == 0 {
            if !out.is_empty() {
                zero_pending = true;
            }
        } else {
            if zero_pending {
                out.push(DIGITS[0]);
                zero_pending = false;
            }
            // 十 at the very start stands alone: 十二, not 一十二.
            // 两百, 两千, and 两万 when 2 is the whole upper group.
            let before_unit = place % 4 >= 2 || (place == 4 && upper == 2);
            if liang && d == 2 && before_unit {
                out.push(LIANG);
            } else if !(d == 1 && place % 4 == 1 && out.is_empty()) {
                out.push(DIGITS[d as usize]);
            }
            if let Some(u) = UNITS[(place % 4) as usize] {
                out.push(u);
            }
        }
        if place == 4 && upper > 0 {
            // 万 closes the upper group; a zero in its ones place is not read.
            out.push(TEN_THOUSAND);
            zero_pending = false;
        }
    }
    out
}

/// The split of a number: 0–99 are always trained on (their numerals are the building
/// blocks of every other one); from 100 up, one number in ten (by the seeded hash) is
/// held out, so the held-out split tests known characters in unseen combinations.
pub fn number_split(n: u32) -> Split {
    if n < 100 {
        Split::Train
    } else {
        split_of("zh-numerals", &n.to_string())
    }
}

pub struct ZhNumeralsTask {
    tok: Tokenizer,
}

impl Default for ZhNumeralsTask {
    fn default() -> Self {
        Self::new()
    }
}

impl ZhNumeralsTask {
    pub fn new() -> Self {
        let alphabet: String = DIGITS
            .iter()
            .copied()
            .chain(UNITS.iter().flatten().copied())
            .chain([TEN_THOUSAND, LIANG])
            .chain('0'..='9')
            .collect();
        ZhNumeralsTask {
            tok: Tokenizer::char_level(&alphabet),
        }
    }

    /// The example for one number, read with 二 ([`numeral`]).
    pub fn example(&self, n: u32) -> Example {
        self.example_read(n, &numeral(n))
    }

    /// The example for one number written as `reading` (one of [`readings`]).
    pub fn example_read(&self, n: u32, reading: &str) -> Example {
        let src = encode_known(&self.tok, reading); // (S)
        let out = encode_known(&self.tok, &n.to_string());
        let mut tokens = vec![self.tok.spec.bos];
        tokens.extend_from_slice(&out); // (T)
        let mut targets = out;
        targets.push(self.tok.spec.eos); // (T)
        Example {
            src,
            tokens,
            targets,
            label: None,
            prompt_len: 1,
        }
    }
}

impl Task for ZhNumeralsTask {
    fn name(&self) -> &'static str {
        "zh-numerals"
    }

    fn description(&self) -> &'static str {
        "read Chinese numerals as digits: 三百一十二 → 312, 一万零五 → 10005, 两千 → 2000"
    }

    fn tokenizer(&self) -> &Tokenizer {
        &self.tok
    }

    fn arch(&self) -> Arch {
        Arch::EncoderDecoder
    }

    fn metric(&self) -> Metric {
        Metric::ExactMatch
    }

    fn max_tokens(&self) -> usize {
        // 九十九万九千九百九十九: 11 characters (the digits are at most 6 + <bos>).
        11
    }

    fn sample(&self, split: Split, rng: &mut ChaCha8Rng) -> Example {
        let n = loop {
            let digits = rng.random_range(1..=MAX_DIGITS);
            let lo = if digits == 1 {
                0
            } else {
                10u32.pow(digits - 1)
            };
            let mut n = rng.random_range(lo..10u32.pow(digits));
            // Half the numbers keep each digit after the first with probability 0.4 only,
            // so runs of zeros (一万零五, 十万零五百) are common, not one draw in ten
            // thousand.
            if digits > 2 && rng.random_bool(0.5) {
                let top = 10u32.pow(digits - 1);
                let mut sparse = n / top * top;
                for place in 0..digits - 1 {
                    if rng.random_bool(0.4) {
                        let p = 10u32.pow(place);
                        sparse += n / p % 10 * p;
                    }
                }
                n = sparse;
            }
            if number_split(n) == split {
                break n;
            }
        };
        // Both readings of a number with a 2 that may be read 两, half and half.
        let mut r = readings(n);
        let i = rng.random_range(0..r.len());
        self.example_read(n, &r.swap_remove(i))
    }

    fn default_prompt(&self) -> &'static str {
        "一万零五"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numerals written by hand from the rules in the module comment.
    const KNOWN: &[(u32, &str)] = &[
        (0, "零"),
        (7, "七"),
        (10, "十"),
        (11, "十一"),
        (19, "十九"),
        (20, "二十"),
        (45, "四十五"),
        (100, "一百"),
        (105, "一百零五"),
        (110, "一百一十"),
        (312, "三百一十二"),
        (999, "九百九十九"),
        (1000, "一千"),
        (1001, "一千零一"),
        (1010, "一千零一十"),
        (1100, "一千一百"),
        (1200, "一千二百"),
        (2020, "二千零二十"),
        (10000, "一万"),
        (10005, "一万零五"),
        (10010, "一万零一十"),
        (10100, "一万零一百"),
        (12345, "一万二千三百四十五"),
        (30020, "三万零二十"),
        (100000, "十万"),
        (100500, "十万零五百"),
        (101000, "十万一千"),
        (110000, "十一万"),
        (200010, "二十万零一十"),
        (500000, "五十万"),
        (999999, "九十九万九千九百九十九"),
        (1000000, "一百万"),
        (10000001, "一千万零一"),
        (99999999, "九千九百九十九万九千九百九十九"),
    ];

    #[test]
    fn numerals_follow_the_standard_reading() {
        for &(n, want) in KNOWN {
            assert_eq!(numeral(n), want, "{n}");
        }
    }

    /// The 两 readings, written by hand: 两 before 百 and 千 and a lone 万, 二 elsewhere.
    const LIANG_KNOWN: &[(u32, Option<&str>)] = &[
        (2, None),
        (12, None),
        (20, None),
        (22, None),
        (102, None),
        (120, None),
        (200, Some("两百")),
        (202, Some("两百零二")),
        (220, Some("两百二十")),
        (2000, Some("两千")),
        (2020, Some("两千零二十")),
        (2200, Some("两千两百")),
        (1200, Some("一千两百")),
        (12000, Some("一万两千")),
        (20000, Some("两万")),
        (20005, Some("两万零五")),
        (22000, Some("两万两千")),
        (120000, None),
        (220000, None),
        (200000, None),
        (202000, Some("二十万两千")),
        (2000000, Some("两百万")),
    ];

    #[test]
    fn two_is_read_liang_before_hundreds_thousands_and_a_lone_wan() {
        for &(n, want) in LIANG_KNOWN {
            assert_eq!(numeral_liang(n).as_deref(), want, "{n}");
            let r = readings(n);
            assert_eq!(r[0], numeral(n));
            assert_eq!(r.len(), 1 + usize::from(want.is_some()), "{n}");
        }
    }

    #[test]
    fn both_readings_are_drawn_and_map_to_the_same_digits() {
        use rand::SeedableRng;
        let t = ZhNumeralsTask::new();
        let tok = t.tokenizer();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (mut liang, mut er) = (0, 0);
        for _ in 0..4000 {
            let ex = t.sample(Split::Train, &mut rng);
            let src = tok.decode(&ex.src);
            let digits = tok.decode(&ex.tokens[1..]);
            let n: u32 = digits.parse().unwrap();
            assert!(readings(n).contains(&src), "{src} → {digits}");
            if numeral_liang(n).is_some() {
                if src.contains(LIANG) {
                    liang += 1;
                } else {
                    er += 1;
                }
            }
        }
        assert!(liang > 100 && er > 100, "两 {liang}, 二 {er}");
        let a = t.example_read(2000, "两千");
        let b = t.example_read(2000, "二千");
        assert_eq!(a.tokens, b.tokens);
        assert_eq!(a.targets, b.targets);
        assert_ne!(a.src, b.src);
    }

    /// An independent reader: digits multiply the unit that follows them, 万 multiplies
    /// everything read so far, 零 only marks a gap.
    fn read(s: &str) -> Option<u32> {
        let (mut total, mut group) = (0u32, 0u32);
        let mut digit: Option<u32> = None;
        for c in s.chars() {
            let unit = match c {
                '十' => 10,
                '百' => 100,
                '千' => 1000,
                '两' => {
                    digit = Some(2);
                    continue;
                }
                '万' => {
                    total = (total + group + digit.take().unwrap_or(0)) * 10_000;
                    group = 0;
                    continue;
                }
                _ => {
                    digit = Some(DIGITS.iter().position(|&d| d == c)? as u32);
                    continue;
                }
            };
            group += digit.take().unwrap_or(1) * unit;
        }
        Some(total + group + digit.unwrap_or(0))
    }

    #[test]
    fn every_numeral_below_a_million_reads_back_as_its_number_and_is_canonical() {
        let zero = DIGITS[0];
        for n in 0..1_000_000u32 {
            if let Some(l) = numeral_liang(n) {
                assert_eq!(read(&l), Some(n), "{n} → {l}");
                assert!(!l.contains("两十") && !l.ends_with(LIANG), "{n} → {l}");
            }
            let s = numeral(n);
            assert_eq!(read(&s), Some(n), "{n} → {s}");
            if n > 0 {
                assert!(!s.ends_with(zero) && !s.starts_with(zero), "{n} → {s}");
                assert!(!s.contains("零零") && !s.starts_with("一十"), "{n} → {s}");
                assert!(!s.contains("零万"), "{n} → {s}");
            }
        }
    }

    #[test]
    fn example_reads_characters_and_writes_digits() {
        let t = ZhNumeralsTask::new();
        let ex = t.example(10005);
        let tok = t.tokenizer();
        assert_eq!(tok.decode(&ex.src), "一万零五");
        assert_eq!(ex.src.len(), 4);
        assert_eq!(tok.decode(&ex.tokens), "<bos>10005");
        assert_eq!(tok.decode(&ex.targets), "10005<eos>");
        assert_eq!(t.example(999_999).src.len(), t.max_tokens());
        // 4 specials, 10 numeral digits, 3 units, 万, 两, 10 digits.
        assert_eq!(tok.vocab_size(), 29);
    }

    #[test]
    fn runs_of_zeros_are_common_in_the_training_draws() {
        use rand::SeedableRng;
        let t = ZhNumeralsTask::new();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 2000;
        let with_wan_ling = (0..n)
            .map(|_| t.sample(Split::Train, &mut rng))
            .filter(|ex| t.tokenizer().decode(&ex.src).contains("万零"))
            .count();
        // 10005-like numbers: one draw in ten thousand without the sparse half.
        assert!(
            with_wan_ling * 20 > n,
            "{with_wan_ling} of {n} contain 万零"
        );
    }

    #[test]
    fn small_numbers_are_always_trained_on_and_large_ones_split() {
        assert!((0..100).all(|n| number_split(n) == Split::Train));
        let held = (100..10_000)
            .filter(|&n| number_split(n) == Split::HeldOut)
            .count();
        assert!((800..1200).contains(&held), "{held}");
    }
}
