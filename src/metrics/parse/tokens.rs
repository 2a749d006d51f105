//! Plain training loops: `key=value` and `key: value` tokens, and the counters they print
//! (`step 00010/01000`, `Epoch 1/2`, `epoch: 3`, Megatron's `iteration      100/  500000`,
//! fairseq's `epoch 001:    100 / 1000`). A key starts a word (after a space or a separator such
//! as `|`, `,`, `(`), so the parts of a path or a URL are never keys; `key:value` without a
//! space is not taken (`cuda:0`, `host:8080`, `12:30`).
//!
//! A name is what the line calls it: the words before the key that run back to the start of
//! its field (after a `|`, `,`, `;`, `: `, `]`, a tab, or the start) belong to it (Megatron's
//! `lm loss`, `number of skipped iterations`, `elapsed time per iteration (ms)`; nanoGPT's
//! `train loss`). A unit glued to the value joins the name in brackets (`time 123.45ms` is
//! `time (ms)`), so values in different units never share a series. Lists of `key value` pairs
//! (nanoGPT's `loss 4.1234, time 123.45ms, mfu 12.34%`, fairseq's `| loss 3.2 | ppl 9.1 |`) are
//! read when a line holds at least two of them, each ending its field: one such pair alone is
//! more often prose (`File "x.py", line 12, in f`). DeepSpeed's one-element lists
//! (`lr=[0.0001]`) are read as their element.

use super::Counter;
use super::found::{Found, MAX_NAME, Role, role};
use super::naming::{is_key_byte, name_start, record_named};
use crate::metrics::number::{Style, digits_at, is_word_byte, number_at};

/// Bytes after which a word starts a key.
#[inline]
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
    /// The counter after an epoch (`epoch 001:    100 / 1000`): progress within the epoch, not
    /// the run's step.
    InEpoch,
}

#[inline(always)]
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

/// Whether `key value` pairs (no `=` or `: ` between) are read in a line: not looked at until
/// the first one, then decided for the whole line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pairs {
    /// Not asked yet whether the text has a separator (most lines never are).
    Unchecked,
    Undecided,
    On,
    Off,
    /// A first pass that only counts them (nothing is recorded).
    Counting(u32),
}

impl Pairs {
    /// Whether pairs may be read in `text`: two pairs each ending its field need a separator
    /// between them, so without one none is looked at. Asked at the first pair.
    #[inline]
    fn may_read(&mut self, text: &[u8]) -> bool {
        if *self == Pairs::Unchecked {
            *self = if memchr::memchr3(b',', b'|', b';', text).is_some() {
                Pairs::Undecided
            } else {
                Pairs::Off
            };
        }
        *self != Pairs::Off
    }
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
    scan_from(s, from, from, found, &mut Pairs::Unchecked, &mut each);
}

/// What the counting pass tells of each read: nothing (a named function, so the scan is
/// instantiated once for it).
fn ignore(_: Read) {}

/// The scan proper, from `i`; `from` is where the text's fields start.
fn scan_from(
    s: &[u8],
    from: usize,
    mut i: usize,
    found: &mut Found,
    pairs: &mut Pairs,
    each: &mut impl FnMut(Read),
) {
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
            let key = Key {
                from,
                start,
                end,
                run: i,
            };
            i = after_key(s, key, found, pairs, each);
        }
    }
}

/// A key's place: `s[start..end]`, its run of key bytes ending at `run`, in a text whose fields
/// start at `from`.
#[derive(Debug, Clone, Copy)]
struct Key {
    from: usize,
    start: usize,
    end: usize,
    run: usize,
}

/// Reads what follows a key; where scanning goes on.
fn after_key(
    s: &[u8],
    key: Key,
    found: &mut Found,
    pairs: &mut Pairs,
    each: &mut impl FnMut(Read),
) -> usize {
    let Key {
        start, end, run, ..
    } = key;
    let counting = matches!(pairs, Pairs::Counting(_));
    let word = counter_word(&s[start..end]);
    if let Some(word) = word
        && let Some((done, total, next)) = counter_at(s, run)
    {
        if counting {
            return next;
        }
        count(found, word, done, total);
        if let Some(read) = counter_read(word, run, next) {
            each(read);
        }
        // fairseq: `epoch 001:    100 / 1000` — the count within the epoch follows.
        if word == CounterWord::Epoch
            && total.is_none()
            && s.get(next) == Some(&b':')
            && let Some((done, Some(total), after)) = counter_at(s, next)
        {
            count(found, CounterWord::InEpoch, done, Some(total));
            if let Some(read) = counter_read(CounterWord::InEpoch, next, after) {
                each(read);
            }
            return after;
        }
        return next;
    }
    // `(ms)` after a name (`elapsed time per iteration (ms): 1.2`): the group is its last word.
    let (last_start, last_run) =
        if start > key.from && s[start - 1] == b'(' && s.get(run) == Some(&b')') {
            (start - 1, run + 1)
        } else {
            (start, run)
        };
    let mut k = last_run;
    let (mut pair, mut equals) = (false, false);
    match s.get(k) {
        Some(b':') if matches!(s.get(k + 1), Some(b' ' | b'\t')) => k += 1,
        Some(b':') => return run,
        _ => {
            let blanks = skip_blanks(s, k);
            if s.get(blanks) == Some(&b'=') {
                k = blanks + 1;
                equals = true;
            } else if blanks > k
                && last_start == start
                && s.get(blanks).is_some_and(|&b| may_start_number(b))
                && pairs.may_read(&s[key.from..])
            {
                pair = true;
            } else {
                return run;
            }
        }
    }
    k = skip_blanks(s, k);
    // DeepSpeed's `lr=[0.0001]`: a list of one.
    let listed = equals && s.get(k) == Some(&b'[');
    let at = k + usize::from(listed);
    let Some((value, number_end, value_end)) = value_at(s, at) else {
        return k;
    };
    let next = match (listed, s.get(value_end)) {
        (false, _) => value_end,
        (true, Some(b']')) => value_end + 1,
        (true, _) => return k,
    };
    // A pair that does not end its field is not one (`shard 3 ready`): its name is not asked.
    if pair && !ends_field(s, next) {
        return run;
    }
    let name_end = if last_start == start { end } else { last_run };
    let name_from = match name_start(s, key.from, last_start, name_end) {
        Some(first) if first == last_start => Some(first),
        // A path of names (`loss/train/total`, `samples/s`) is a whole name already: Composer's
        // `Train loss/train/total` names `loss/train/total` for training.
        _ if last_start == start && s[start..end].contains(&b'/') => Some(start),
        other => other,
    };
    if pair {
        if name_from.is_none() {
            return run;
        }
        let name = &s[name_from.unwrap_or(last_start)..end];
        match pairs {
            Pairs::Counting(n) => {
                *n += u32::from(role(name) == Role::Metric);
                return next;
            }
            Pairs::Undecided => {
                let mut counted = Pairs::Counting(0);
                scan_from(s, key.from, start, found, &mut counted, &mut ignore);
                *pairs = match counted {
                    Pairs::Counting(n) if n >= 2 => Pairs::On,
                    _ => Pairs::Off,
                };
                if *pairs == Pairs::Off {
                    return run;
                }
            }
            Pairs::Unchecked | Pairs::Off => return run,
            Pairs::On => {}
        }
    } else if counting {
        return next;
    }
    let name = &s[name_from.unwrap_or(last_start)..name_end];
    let (id, role) = record_named(found, name, &s[number_end..value_end], value);
    // A shape reads the value alone: a list's `]` is text to it.
    if let (Some(run), Some(at), Some(next)) = (position(run), position(at), position(value_end)) {
        each(Read::Value {
            run,
            at,
            next,
            id,
            role,
            counter_word: word.is_some(),
        });
    }
    next
}

/// Whether a number as free text may start with `b`: a sign, a digit, a point, `nan`, `inf`.
#[inline]
fn may_start_number(b: u8) -> bool {
    matches!(
        b,
        b'0'..=b'9' | b'-' | b'+' | b'.' | b'n' | b'N' | b'i' | b'I'
    )
}

/// A number at `s[at]` as free text gives it: its value, where its digits end and where its unit
/// (if any) ends.
#[inline]
fn value_at(s: &[u8], at: usize) -> Option<(f64, usize, usize)> {
    let (value, next) = number_at(s, at, Style::Text)?;
    // Most values end in a digit: no unit to look for; `nan`, `inf` are letters that are the
    // number, not a unit.
    if s[next - 1].is_ascii_digit() || !value.is_finite() {
        return Some((value, next, next));
    }
    let number_end = s[at..next]
        .iter()
        .rposition(|b| b.is_ascii_digit() || *b == b'.')
        .map_or(next, |i| at + i + 1);
    Some((value, number_end, next))
}

/// Whether a pair's value ends its field: blanks, then a separator or the end.
#[inline]
fn ends_field(s: &[u8], next: usize) -> bool {
    matches!(s.get(skip_blanks(s, next)), None | Some(b',' | b'|' | b';'))
}

#[inline]
fn counter_read(word: CounterWord, run: usize, next: usize) -> Option<Read> {
    position(run)
        .zip(position(next))
        .map(|(run, next)| Read::Counter { word, run, next })
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
        (CounterWord::InEpoch, Some(total)) => found.step_counter(Counter { done, total }),
        (CounterWord::InEpoch, None) => {}
    }
}

#[inline]
fn skip_blanks(s: &[u8], mut k: usize) -> usize {
    while matches!(s.get(k), Some(b' ' | b'\t')) {
        k += 1;
    }
    k
}

/// After a counter word: `[:=]? blanks [[(]? done (blanks? / blanks? total)? [])]?`, integers
/// only, standing on their own. Returns done, total and where scanning goes on.
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
    let slash = skip_blanks(s, k);
    if s.get(slash) == Some(&b'/') {
        match integer_at(s, skip_blanks(s, slash + 1)) {
            Some((t, after)) => {
                total = Some(t);
                k = after;
            }
            // `4/x` is not a counter; `4 /x` is a counter of 4 before other text.
            None if slash == k => return None,
            None => {}
        }
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
