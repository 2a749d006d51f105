//! Plain training loops: `key=value` and `key: value` tokens, and the counters they print
//! (`step 00010/01000`, `Epoch 1/2`, `epoch: 3`). A key starts a word (after a space or a
//! separator such as `|`, `,`, `(`), so the parts of a path or a URL are never keys; `key:value`
//! without a space is not taken (`cuda:0`, `host:8080`, `12:30`).

use super::Counter;
use super::found::{Found, MAX_NAME, Role};
use crate::metrics::number::{Style, digits_at, is_word_byte, number_at};

/// Bytes a key is made of: `train/loss`, `samples/s`, `eval_f1-macro`, `lr.group0`. A table:
/// this is asked of every byte of every line.
const KEY_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-');
        b += 1;
    }
    table
};

fn is_key_byte(b: u8) -> bool {
    KEY_BYTES[usize::from(b)]
}

/// Bytes after which a word starts a key.
fn is_boundary(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'|' | b',' | b';' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'\'' | b'"'
    )
}

/// Which counter a word introduces, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CounterWord {
    Epoch,
    Step,
}

fn counter_word(word: &[u8]) -> Option<CounterWord> {
    let is = |w: &[u8]| word.eq_ignore_ascii_case(w);
    // By length first: this is asked of every key.
    match word.len() {
        5 if is(b"epoch") => Some(CounterWord::Epoch),
        4 if is(b"step") || is(b"iter") => Some(CounterWord::Step),
        5 if is(b"batch") => Some(CounterWord::Step),
        9 if is(b"iteration") => Some(CounterWord::Step),
        _ => None,
    }
}

/// What reading one key found after it, with where it was: the shape of a line
/// ([`super::shape`]) is made of these.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Read {
    /// A counter after a counter word, read by [`counter_at`] from `run` (the end of the word)
    /// to `next`.
    Counter {
        word: CounterWord,
        run: u32,
        next: u32,
    },
    /// A value after `key=` or `key: `, the number from `at` to `next`; its key ends at `run`
    /// and is a counter word when `counter_word`.
    Value {
        run: u32,
        at: u32,
        next: u32,
        id: u32,
        role: Role,
        counter_word: bool,
    },
}

/// Reads every token in `text[from..to]` into `found`.
pub(crate) fn scan(text: &[u8], from: usize, to: usize, found: &mut Found) {
    scan_reads(text, from, to, found, |_| {});
}

/// As [`scan`], telling `each` what each key read.
pub(crate) fn scan_reads(
    text: &[u8],
    from: usize,
    to: usize,
    found: &mut Found,
    mut each: impl FnMut(Read),
) {
    let s = &text[..to.min(text.len())];
    let mut i = from;
    while i < s.len() {
        if !is_key_byte(s[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < s.len() && is_key_byte(s[i]) {
            i += 1;
        }
        let starts_word = start == from || is_boundary(s[start - 1]);
        if !starts_word || !(s[start].is_ascii_alphabetic() || s[start] == b'_') {
            continue;
        }
        let mut end = i;
        while matches!(s[end - 1], b'.' | b'/' | b'-') {
            end -= 1;
        }
        if end - start <= MAX_NAME {
            let (next, read) = after_key(s, start, end, i, found);
            if let Some(read) = read {
                each(read);
            }
            i = next;
        }
    }
}

/// Reads what follows the key `s[start..end]` (whose run of key bytes ends at `run`); where
/// scanning goes on, and what was read.
fn after_key(
    s: &[u8],
    start: usize,
    end: usize,
    run: usize,
    found: &mut Found,
) -> (usize, Option<Read>) {
    let name = &s[start..end];
    let word = counter_word(name);
    if let Some(word) = word
        && let Some((done, total, next)) = counter_at(s, run)
    {
        count(found, word, done, total);
        let read = position(run)
            .zip(position(next))
            .map(|(run, next)| Read::Counter { word, run, next });
        return (next, read);
    }
    let mut k = run;
    match s.get(k) {
        Some(b':') if matches!(s.get(k + 1), Some(b' ' | b'\t')) => k += 1,
        Some(b':') => return (run, None),
        _ => {
            k = skip_blanks(s, k);
            if s.get(k) != Some(&b'=') {
                return (run, None);
            }
            k += 1;
        }
    }
    k = skip_blanks(s, k);
    match number_at(s, k, Style::Text) {
        Some((value, next)) => {
            let (id, role) = found.record(name, value);
            let read = match (position(run), position(k), position(next)) {
                (Some(run), Some(at), Some(next)) => Some(Read::Value {
                    run,
                    at,
                    next,
                    id,
                    role,
                    counter_word: word.is_some(),
                }),
                _ => None,
            };
            (next, read)
        }
        None => (k, None),
    }
}

fn position(i: usize) -> Option<u32> {
    u32::try_from(i).ok()
}

/// A counter's effect: `epoch 1/3` is the epoch and its counter, `step 10/1000` the step.
pub(crate) fn count(found: &mut Found, word: CounterWord, done: f64, total: Option<f64>) {
    match (word, total) {
        (CounterWord::Epoch, Some(total)) => found.epoch_counter(Counter { done, total }),
        (CounterWord::Epoch, None) => {
            found.epoch.get_or_insert(done);
        }
        (CounterWord::Step, total) => {
            found.step.get_or_insert(done);
            if let Some(total) = total {
                found.step_counter(Counter { done, total });
            }
        }
    }
}

fn skip_blanks(s: &[u8], mut k: usize) -> usize {
    while matches!(s.get(k), Some(b' ' | b'\t')) {
        k += 1;
    }
    k
}

/// After a counter word: `[:=]? blanks [[(]? done (/ total)? [])]?`, integers only, standing
/// on their own. Returns done, total and where scanning goes on.
pub(crate) fn counter_at(s: &[u8], run: usize) -> Option<(f64, Option<f64>, usize)> {
    let mut k = run;
    if matches!(s.get(k), Some(b':' | b'=')) {
        k += 1;
    }
    let blanks = skip_blanks(s, k);
    if blanks == k && k == run {
        return None;
    }
    k = blanks;
    let bracket = matches!(s.get(k), Some(b'[' | b'('));
    k += usize::from(bracket);
    let (done, after) = integer_at(s, k)?;
    k = after;
    let mut total = None;
    if s.get(k) == Some(&b'/') {
        let (t, after) = integer_at(s, k + 1)?;
        total = Some(t);
        k = after;
    }
    if bracket && matches!(s.get(k), Some(b']' | b')')) {
        k += 1;
    }
    let stands_alone = match s.get(k) {
        None => true,
        Some(b'.') => !s.get(k + 1).is_some_and(u8::is_ascii_digit),
        Some(&b) => !is_word_byte(b),
    };
    stands_alone.then_some((done, total, k))
}

fn integer_at(s: &[u8], k: usize) -> Option<(f64, usize)> {
    let (value, digits) = digits_at(s, k, 0);
    if digits == 0 || digits > 15 {
        return None;
    }
    // At most 15 digits: exact as a double (and a signed conversion is one instruction).
    Some((value as i64 as f64, k + digits))
}
