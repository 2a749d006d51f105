//! Plain training loops: `key=value` and `key: value` tokens, and the counters they print
//! (`step 00010/01000`, `Epoch 1/2`, `epoch: 3`). A key starts a word (after a space or a
//! separator such as `|`, `,`, `(`), so the parts of a path or a URL are never keys; `key:value`
//! without a space is not taken (`cuda:0`, `host:8080`, `12:30`).

use super::Counter;
use super::found::{Found, MAX_NAME, NameRef};
use crate::metrics::number::{Style, is_word_byte, number_at};

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
enum CounterWord {
    Epoch,
    Step,
}

fn counter_word(word: &[u8]) -> Option<CounterWord> {
    let is = |w: &[u8]| word.eq_ignore_ascii_case(w);
    if is(b"epoch") {
        Some(CounterWord::Epoch)
    } else if is(b"step") || is(b"iter") || is(b"iteration") || is(b"batch") {
        Some(CounterWord::Step)
    } else {
        None
    }
}

/// Reads every token in `text[from..to]` into `found`.
pub(crate) fn scan(text: &[u8], from: usize, to: usize, found: &mut Found) {
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
            i = after_key(s, start, end, i, found);
        }
    }
}

/// Reads what follows the key `s[start..end]` (whose run of key bytes ends at `run`), and
/// returns where scanning goes on.
fn after_key(s: &[u8], start: usize, end: usize, run: usize, found: &mut Found) -> usize {
    let name = &s[start..end];
    if let Some(word) = counter_word(name)
        && let Some((done, total, next)) = counter_at(s, run)
    {
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
        return next;
    }
    let mut k = run;
    match s.get(k) {
        Some(b':') if matches!(s.get(k + 1), Some(b' ' | b'\t')) => k += 1,
        Some(b':') => return run,
        _ => {
            k = skip_blanks(s, k);
            if s.get(k) != Some(&b'=') {
                return run;
            }
            k += 1;
        }
    }
    k = skip_blanks(s, k);
    match number_at(s, k, Style::Text) {
        Some((value, next)) => {
            found.record(name, NameRef::Text(start, end), value);
            next
        }
        None => k,
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
fn counter_at(s: &[u8], run: usize) -> Option<(f64, Option<f64>, usize)> {
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
    let digits = s
        .get(k..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 || digits > 15 {
        return None;
    }
    let value = s[k..k + digits]
        .iter()
        .fold(0u64, |n, &b| n * 10 + u64::from(b - b'0'));
    Some((value as f64, k + digits))
}
