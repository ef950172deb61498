//! Any bytes as a learner's text (the lab's task `text`, `tplay train --text-file`): a text
//! that is not UTF-8 is refused by the CLI before it gets here; any UTF-8 text either is
//! refused with an input error or gives a task whose vocabulary is within its limit and
//! holds every character of the text, whose split covers the text exactly, and whose windows
//! of both splits are `<bos>` then the text's own characters, from their own part only.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tplay::tasks::text::{TextTask, MAX_TEXT_VOCAB};
use tplay::tasks::{Split, Task};
use tplay::Error;

fuzz_target!(|data: &[u8]| {
    let Some((&len, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let len = 1 + (len as usize % 80);
    let task = match TextTask::new(text, len) {
        Ok(t) => t,
        Err(Error::Input(m)) => {
            assert!(m.starts_with("len: ") || m.starts_with("text: "), "{m}");
            return;
        }
        Err(e) => panic!("not an input error: {e}"),
    };
    let tok = task.tokenizer();
    assert!(tok.vocab_size() <= MAX_TEXT_VOCAB);
    let (train, held) = task.sizes();
    assert_eq!(train + held, text.chars().count());
    assert!(held >= 2 && train > held);
    let enc = tok.encode(text);
    assert!(enc.unknown.is_empty());
    assert_eq!(tok.decode(&enc.ids), text);
    let mut rng = ChaCha8Rng::seed_from_u64(len as u64);
    for split in [Split::Train, Split::HeldOut] {
        let part = task.part(split);
        for _ in 0..4 {
            let ex = task.sample(split, &mut rng);
            let n = ex.tokens.len();
            assert_eq!(n, len.min(part.len()));
            assert_eq!(ex.targets.len(), n);
            assert_eq!(ex.tokens[0], tok.spec.bos);
            assert_eq!(&ex.tokens[1..], &ex.targets[..n - 1]);
            assert!(part.windows(n).any(|w| w == ex.targets.as_slice()));
        }
    }
});
