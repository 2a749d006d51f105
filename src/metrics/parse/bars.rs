//! Progress bars. tqdm (and Lightning's bar, which is tqdm) prints
//! `{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]`,
//! the postfix being `, key=value` pairs; Keras prints `469/469 [=====] - 8s 16ms/step - loss: 0.58`
//! (Keras 2), `469/469 ━━━━ 8s 16ms/step - loss: 0.58` (Keras 3) or `469/469 - 8s - 16ms/step -
//! loss: 0.58` (`verbose=2`); Rich (Lightning's `RichProgressBar`) prints `Epoch 0/5  ━━━━ 32/32
//! 0:00:01 • 0:00:00 28.19it/s v_num: 0.000 train_loss: 1.715`. The bar's counter is the
//! progress through the current epoch (or the whole run for Hugging Face's bar); its metrics are
//! read as plain tokens.

use memchr::{memchr, memchr_iter, memrchr};

use super::found::Found;
use super::{Counter, tokens};
use crate::metrics::number::{Style, number_at};

/// Reads a tqdm bar into `found`; false when `text` is not one.
pub(crate) fn tqdm(text: &[u8], found: &mut Found) -> bool {
    let Some(pct) = memchr_iter(b'%', text).find(|&p| text.get(p + 1) == Some(&b'|')) else {
        return false;
    };
    // The percentage, right-aligned in three columns before `%|`.
    let digits = text[..pct]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .count();
    let Some((percent, _)) = number_at(text, pct - digits, Style::Literal).filter(|_| digits > 0)
    else {
        return false;
    };
    let Some(bar_end) = memchr(b'|', &text[pct + 2..]).map(|q| pct + 2 + q) else {
        return false;
    };
    let desc_end = text[..pct - digits]
        .iter()
        .rposition(|&b| b != b' ')
        .map_or(0, |p| p + 1);
    let counts_iterations = text[bar_end..]
        .windows(4)
        .any(|w| w == b"it/s" || w == b"s/it");
    tokens::scan(text, 0, desc_end, found);
    if counts_iterations && !is_side_work(&text[..desc_end]) {
        found.progress.percent = Some(percent);
        if let Some(counter) = counter_at(text, bar_end + 1) {
            found.step_counter(counter);
        }
    }
    // The postfix: after `[elapsed<remaining, rate`, up to the closing bracket.
    if let Some(open) = memchr(b'[', &text[bar_end..]).map(|o| bar_end + o)
        && let Some(close) = memrchr(b']', &text[open..]).map(|c| open + c)
        && let Some(rate) = memchr(b',', &text[open..close]).map(|c| open + c + 1)
        && let Some(postfix) = memchr(b',', &text[rate..close]).map(|c| rate + c + 1)
    {
        tokens::scan(text, postfix, close, found);
    }
    true
}

/// Bars that count something other than training steps: Lightning's `Validation`, `Sanity
/// Checking`, `Testing`, `Predicting`, evaluation loops, loading checkpoint shards. (Bars of
/// bytes or examples, such as downloads and dataset maps, do not count `it` at all.)
fn is_side_work(desc: &[u8]) -> bool {
    (0..desc.len()).any(|i| {
        // The words start with different letters: one word to compare at each place.
        let word: &[u8] = match desc[i].to_ascii_lowercase() {
            b'v' => b"valid",
            b's' => b"sanity",
            b't' => b"test",
            b'p' => b"predict",
            b'e' => b"eval",
            b'l' => b"load",
            b'm' => b"map",
            _ => return false,
        };
        desc.get(i..i + word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word))
    })
}

/// `n/total` after blanks, as tqdm formats them (`4/18`, `1.20k/10.0k` with `unit_scale`).
fn counter_at(text: &[u8], from: usize) -> Option<Counter> {
    let k = from + text.get(from..)?.iter().take_while(|&&b| b == b' ').count();
    let (done, k) = scaled_at(text, k)?;
    if text.get(k) != Some(&b'/') {
        return None;
    }
    let (total, _) = scaled_at(text, k + 1)?;
    Some(Counter { done, total })
}

fn scaled_at(text: &[u8], k: usize) -> Option<(f64, usize)> {
    let run = text.get(k..)?;
    // Digits and points, in one pass that works out the integer most counters are.
    let (mut integer, mut digits, mut point) = (0u64, 0, false);
    for &b in run {
        match b {
            b'0'..=b'9' => integer = integer.wrapping_mul(10).wrapping_add(u64::from(b - b'0')),
            b'.' => point = true,
            _ => break,
        }
        digits += 1;
    }
    if digits == 0 {
        // Not a number (most lines, asked whether they start like a Keras bar).
        return None;
    }
    // Up to 15 digits the integer is exact (and has not wrapped).
    let value = if !point && digits <= 15 {
        integer as f64
    } else {
        std::str::from_utf8(&run[..digits]).ok()?.parse().ok()?
    };
    let scale = match text.get(k + digits) {
        Some(b'k') => 1e3,
        Some(b'M') => 1e6,
        Some(b'G') => 1e9,
        _ => return Some((value, k + digits)),
    };
    Some((value * scale, k + digits + 1))
}

/// Reads a Rich bar into `found`; false when `text` is not one. Its counter follows the bar.
pub(crate) fn rich(text: &[u8], found: &mut Found) -> bool {
    // The bar's first byte, found with memchr, then the rest of it: a line without one costs
    // one pass (a substring search would build a searcher for every line).
    let Some(start) = memchr_iter(RICH_BAR[0], text).find(|&i| text[i..].starts_with(RICH_BAR))
    else {
        return false;
    };
    let mut end = start;
    while let Some(rest) = text.get(end..)
        && let Some(piece) = RICH_PIECES.iter().find(|p| rest.starts_with(p))
    {
        end += piece.len();
    }
    let Some(counter) = counter_at(text, end).filter(|_| text.get(end) == Some(&b' ')) else {
        return false;
    };
    let after = end + 1 + text[end + 1..].iter().take_while(|&&b| b != b' ').count();
    tokens::scan(text, 0, start, found);
    if !is_side_work(&text[..start]) {
        found.step_counter(counter);
    }
    tokens::scan(text, after, text.len(), found);
    true
}

/// Rich's bar: `━` (U+2501) done and to do, `╸` `╺` (U+2578, U+257A) at the edge.
pub(super) const RICH_BAR: &[u8] = "\u{2501}".as_bytes();
const RICH_PIECES: [&[u8]; 3] = [
    "\u{2501}".as_bytes(),
    "\u{2578}".as_bytes(),
    "\u{257a}".as_bytes(),
];

/// Reads a Keras progress line into `found`; false when `text` is not one.
pub(crate) fn keras(text: &[u8], found: &mut Found) -> bool {
    let start = text.iter().take_while(|&&b| b == b' ').count();
    // Its counter's `n/` first, as `counter_at` reads it: most lines start otherwise (a word, a
    // date, a time).
    if !matches!(text.get(start), Some(b'0'..=b'9' | b'.')) {
        return false;
    }
    let digits = text[start..]
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .count();
    let scaled = matches!(text.get(start + digits), Some(b'k' | b'M' | b'G'));
    if digits == 0 || text.get(start + digits + usize::from(scaled)) != Some(&b'/') {
        return false;
    }
    let Some(counter) = counter_at(text, start) else {
        return false;
    };
    let after = start + text[start..].iter().take_while(|&&b| b != b' ').count();
    let rest = &text[after..];
    // `[====`, `━━━━` (U+2501) or `- 8s`.
    let is_bar = rest.starts_with(b" [")
        || rest.starts_with(" \u{2501}".as_bytes())
        || rest.starts_with(b" - ");
    if !is_bar || counter.done.fract() != 0.0 {
        return false;
    }
    found.step_counter(counter);
    tokens::scan(text, after, text.len(), found);
    true
}
