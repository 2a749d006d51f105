//! A metric's whole name, as the line calls it: the words before its key that run back to the
//! start of the key's field (Megatron's `number of skipped iterations`, nanoGPT's `train loss`),
//! a unit in brackets (`(ms)`, `(TFLOP/s/GPU)`) as a word of it, and a unit glued to the value
//! joined in brackets (`time (ms)`). Two different names never become one series.

use super::found::{Found, MAX_NAME, Role};

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

#[inline]
pub(super) fn is_key_byte(b: u8) -> bool {
    KEY_BYTES[usize::from(b)]
}

/// Records `name` (with its unit in brackets, when the value had one); the id and role.
#[inline(always)]
pub(super) fn record_named(found: &mut Found, name: &[u8], unit: &[u8], value: f64) -> (u32, Role) {
    if unit.is_empty() {
        found.record(name, value)
    } else {
        record_with_unit(found, name, unit, value)
    }
}

/// `name (unit)`, made on the stack (most values have no unit: kept out of the scan's way).
#[inline(never)]
fn record_with_unit(found: &mut Found, name: &[u8], unit: &[u8], value: f64) -> (u32, Role) {
    let mut buf = [0u8; MAX_NAME];
    let len = name.len() + unit.len() + 3;
    match buf.get_mut(..len) {
        Some(whole) => {
            whole[..name.len()].copy_from_slice(name);
            whole[name.len()..name.len() + 2].copy_from_slice(b" (");
            whole[name.len() + 2..len - 1].copy_from_slice(unit);
            whole[len - 1] = b')';
            found.record(whole, value)
        }
        None => found.record(name, value),
    }
}

/// Most words a name is made of.
const MAX_WORDS: usize = 8;

/// Where a key's whole name (ending at `end`) starts: at the first of the words before it, one
/// blank apart, that run back to the start of its field (a separator, or the number that ends
/// the field before); the key's own start when it starts the field. None when something else (a number, a second blank) comes first, or the name would
/// be too long: then the key alone is the name.
#[inline(always)]
pub(super) fn name_start(s: &[u8], from: usize, start: usize, end: usize) -> Option<usize> {
    // The usual key, at once: one blank after the value of the field before (`17/100
    // loss=0.81`) or after a logger's dash (`- loss: 0.58`), as the loop below finds.
    if start >= from + 2 && s[start - 1] == b' ' {
        let b = s[start - 2];
        let dash = b == b'-' && (start - 2 == from || s[start - 3] == b' ');
        if b.is_ascii_digit() || b == b'.' || dash {
            return Some(start);
        }
    }
    let mut first = start;
    for _ in 0..MAX_WORDS {
        if first == from {
            return Some(first);
        }
        let before = s[first - 1];
        if is_field_start(before) {
            return Some(first);
        }
        if before != b' ' {
            return None;
        }
        let mut blanks = first - 1;
        while blanks > from && s[blanks - 1] == b' ' {
            blanks -= 1;
        }
        // Blanks back to the text's start, or to a separator: the field starts here.
        if blanks == from || is_field_start(s[blanks - 1]) {
            return Some(first);
        }
        if blanks != first - 1 {
            return None;
        }
        // The value of the field before (`loss: 10.8 iter time (s): 0.7`), the end of a
        // sentence (`Skipping step. Attempted loss scale: 8`), a logger's ` - ` between parts.
        let dash = s[blanks - 1] == b'-' && (blanks - 1 == from || s[blanks - 2] == b' ');
        if s[blanks - 1].is_ascii_digit() || s[blanks - 1] == b'.' || dash {
            return Some(first);
        }
        let word = word_before(s, from, blanks)?;
        if end - word > MAX_NAME {
            return None;
        }
        first = word;
    }
    None
}

/// The start of the word that ends at `s[end]`: letters, digits and key bytes starting with a
/// letter (`global`, `GPU`), or a bracketed group (`(ms)`).
#[inline]
fn word_before(s: &[u8], from: usize, end: usize) -> Option<usize> {
    let mut k = end;
    let group = s[end - 1] == b')';
    if group {
        k -= 1;
        while k > from && is_key_byte(s[k - 1]) {
            k -= 1;
        }
        return (k > from && s[k - 1] == b'(' && k < end - 1).then(|| k - 1);
    }
    while k > from && is_key_byte(s[k - 1]) {
        k -= 1;
    }
    (k < end && s[k].is_ascii_alphabetic()).then_some(k)
}

/// What a field starts after.
#[inline]
fn is_field_start(b: u8) -> bool {
    matches!(b, b'|' | b',' | b';' | b':' | b']' | b'\t')
}
