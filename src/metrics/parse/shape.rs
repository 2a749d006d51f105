//! A training loop prints the same line again and again with only its numbers changed. A
//! stream keeps the shape of its last plain line: its text, and what each key read after it.
//! The next line is read by comparing the text between the numbers and reading only the
//! numbers, each as the full scan would at that place; anything that differs (other text, a
//! number that now reads differently, a unit, `nan`) sends the line to the full scan, which
//! then gives the stream its new shape. The result is what the full scan gives; a proptest
//! holds it to that.
//!
//! Why comparing the text is enough: the scan decides everything from the bytes around it, and
//! the bytes around a number are the text before and after it. A number standing where a key
//! could start would be glued to it and not read; a shape's numbers hold only digits, points,
//! signs and exponents (counters: digits, `/`, brackets and separators), so no number can hold
//! what another format is recognised by (`{`, `%`, `|`, an escape).

use super::found::Found;
use super::tokens::{self, Read, count, counter_at};
use crate::metrics::number::{Style, number_at_plain};

/// The shape of a stream's last plain line.
#[derive(Debug, Default)]
pub struct Shape {
    /// The line it was taken from.
    text: Vec<u8>,
    reads: Vec<Read>,
    /// The names' generation its ids belong to.
    generation: u64,
}

impl Shape {
    /// Reads `s` into `found` by this shape; false (with `found` as it may be left) when `s`
    /// does not have it.
    pub(crate) fn read(&self, s: &[u8], found: &mut Found) -> bool {
        if self.reads.is_empty() || found.names.generation() != self.generation {
            return false;
        }
        let t = &self.text[..];
        // Where the shape's text and the line are: the same text, at different places once
        // a number's length changed.
        let (mut tp, mut sp) = (0, 0);
        // `t[tp..upto]` is at `s[sp..]`: where it ends there.
        let same_text = |tp: usize, upto: usize, sp: usize| {
            let part = t.get(tp..upto)?;
            let here = s.get(sp..sp + part.len())?;
            same(part, here).then_some(sp + part.len())
        };
        for read in &self.reads {
            match *read {
                Read::Counter { word, run, next } => {
                    let Some(at) = same_text(tp, run as usize, sp) else {
                        return false;
                    };
                    let Some((done, total, end)) = counter_at(s, at) else {
                        return false;
                    };
                    // What a counter reads (blanks, a bracket, digits, `/`) is all counter bytes.
                    debug_assert!(s[at..end].iter().all(|&b| is_counter_byte(b)));
                    count(found, word, done, total);
                    (tp, sp) = (next as usize, end);
                }
                Read::Value {
                    run,
                    at,
                    next,
                    id,
                    role,
                    counter_word,
                } => {
                    let Some(s_at) = same_text(tp, at as usize, sp) else {
                        return false;
                    };
                    // A counter word whose counter did not read before might now.
                    let s_run = sp + (run as usize).saturating_sub(tp);
                    if counter_word && counter_at(s, s_run).is_some() {
                        return false;
                    }
                    let Some((value, end, plain)) = number_at_plain(s, s_at, Style::Text) else {
                        return false;
                    };
                    // A plain number is sign, digits, point and exponent: number bytes all.
                    if !plain && !s[s_at..end].iter().all(|&b| is_number_byte(b)) {
                        return false;
                    }
                    found.record_judged(id, role, value);
                    (tp, sp) = (next as usize, end);
                }
            }
        }
        match (s.get(sp..), t.get(tp..)) {
            (Some(rest), Some(text)) => rest.len() == text.len() && same(rest, text),
            _ => false,
        }
    }

    /// Reads `text`, a plain line, in full into `found` and takes its shape when every number
    /// in it is of the kind a shape holds; else the stream has no shape until the next such
    /// line.
    pub(crate) fn take(&mut self, text: &[u8], found: &mut Found) {
        let reads = &mut self.reads;
        reads.clear();
        tokens::scan_reads(text, 0, text.len(), found, |read| reads.push(read));
        let kept = !reads.is_empty()
            && !text.contains(&b'{')
            && reads.iter().all(|read| {
                let (from, to, kind): (u32, u32, fn(u8) -> bool) = match *read {
                    Read::Counter { run, next, .. } => (run, next, is_counter_byte),
                    Read::Value { at, next, .. } => (at, next, is_number_byte),
                };
                text.get(from as usize..to as usize)
                    .is_some_and(|bytes| bytes.iter().all(|&b| kind(b)))
            });
        if kept {
            self.text.clear();
            self.text.extend_from_slice(text);
            self.generation = found.names.generation();
        } else {
            reads.clear();
        }
    }
}

/// Whether two slices of the same length hold the same bytes. The text between a line's
/// numbers is a few bytes long: compared a word at a time here, without a call.
fn same(a: &[u8], b: &[u8]) -> bool {
    fn words<const N: usize>(a: &[u8], b: &[u8]) -> bool {
        a.first_chunk::<N>() == b.first_chunk::<N>() && a.last_chunk::<N>() == b.last_chunk::<N>()
    }
    match a.len() {
        0 => true,
        1..4 => a.iter().zip(b).all(|(x, y)| x == y),
        4..8 => words::<4>(a, b),
        8..=16 => words::<8>(a, b),
        _ => a == b,
    }
}

fn is_number_byte(b: u8) -> bool {
    matches!(b, b'0'..=b'9' | b'.' | b'-' | b'+' | b'e' | b'E')
}

fn is_counter_byte(b: u8) -> bool {
    matches!(
        b,
        b'0'..=b'9' | b'/' | b':' | b'=' | b' ' | b'\t' | b'[' | b']' | b'(' | b')'
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use proptest::prelude::*;

    use super::*;
    use crate::metrics::parse::{LineParser, Parsed};

    const KEYS: &[&str] = &[
        "loss",
        "acc",
        "lr",
        "step",
        "epoch",
        "Epoch",
        "iter",
        "batch",
        "grad_norm",
        "eval/loss",
        "port",
        "x",
        "samples/s",
        "nan",
    ];
    const SEPARATORS: &[&str] = &["=", ": ", " = ", ":", " ", ""];
    const NUMBERS: &[&str] = &[
        "0.5", "12", "3e-4", "-1.25", "1,234", "nan", "35ms", "12%", "1.2.3", "10/100", "2/3",
        "[3/10]", "007", "4.9e-05", "1e23", "+2", "5.", ".5", "12:30", "inf", "0x1f",
    ];
    const OTHERS: &[&str] = &[
        "|", "(", ")", "%", "%|", "{", "}", " ", "-", ".", "/", "it/s", "INFO", "\t", ",", "[",
        "]", " - ", "━", "'",
    ];

    #[derive(Debug, Clone)]
    enum Token {
        Key(usize),
        Separator(usize),
        Number(usize),
        Other(usize),
    }

    /// Mostly `key<sep>number` fields (what a training loop prints), between other bytes.
    fn tokens() -> impl Strategy<Value = Vec<Token>> {
        let separator = prop_oneof![3 => 0..2usize, 1 => 0..SEPARATORS.len()];
        let number = prop_oneof![3 => 0..4usize, 1 => 0..NUMBERS.len()];
        let field = (0..KEYS.len(), separator, number)
            .prop_map(|(k, s, n)| vec![Token::Key(k), Token::Separator(s), Token::Number(n)]);
        let single = prop_oneof![
            (0..KEYS.len()).prop_map(Token::Key),
            (0..SEPARATORS.len()).prop_map(Token::Separator),
            (0..NUMBERS.len()).prop_map(Token::Number),
            (0..OTHERS.len()).prop_map(Token::Other),
        ]
        .prop_map(|t| vec![t]);
        let space = Just(vec![Token::Other(7)]);
        prop::collection::vec(prop_oneof![6 => field, 3 => space, 1 => single], 0..10)
            .prop_map(|groups| groups.concat())
    }

    fn text(tokens: &[Token]) -> Vec<u8> {
        tokens
            .iter()
            .map(|t| match *t {
                Token::Key(i) => KEYS[i],
                Token::Separator(i) => SEPARATORS[i],
                Token::Number(i) => NUMBERS[i],
                Token::Other(i) => OTHERS[i],
            })
            .collect::<String>()
            .into_bytes()
    }

    /// What a stream that read `first` by its shape reads of `second`, and what a parser with
    /// no shape reads of it.
    fn both(first: &[u8], second: &[u8]) -> (Option<Parsed>, Option<Parsed>) {
        let mut parser = LineParser::new();
        let mut shape = Shape::default();
        parser.parse_shaped(first, &mut shape);
        let shaped = parser
            .parse_shaped(second, &mut shape)
            .map(|p| p.to_owned());
        let full = LineParser::new().parse(second).map(|p| p.to_owned());
        (shaped, full)
    }

    #[test]
    fn a_line_of_the_same_shape_is_read_by_it_with_its_own_numbers() {
        let first = b"epoch 2/3 step 10/5000 loss=0.1234 acc=0.8 lr=3.0e-4 grad_norm=1.27";
        let second = b"epoch 2/3 step 11/5000 loss=0.09 acc=0.81 lr=3.0e-4 grad_norm=1.5";
        let mut parser = LineParser::new();
        let mut shape = Shape::default();
        parser.parse_shaped(first, &mut shape);
        assert_eq!(shape.reads.len(), 6);
        let (shaped, full) = both(first, second);
        assert_eq!(shaped, full);
        let parsed = shaped.unwrap();
        assert_eq!(parsed.step, Some(11.0));
        assert_eq!(parsed.metrics[0], ("loss".to_string(), 0.09));
    }

    #[test]
    fn a_number_that_now_reads_otherwise_is_read_in_full() {
        for second in [
            &b"step 7/10 loss=nan"[..],
            b"step 7/10 loss=35ms",
            b"step 7/10 loss=1,234",
            b"step 7 loss=0.5",
            b"step 7/10 loss=0.5 acc=1",
            b"step 7/10 loss:0.5",
        ] {
            let (shaped, full) = both(b"step 1/10 loss=0.25", second);
            let line = String::from_utf8_lossy(second);
            assert_eq!(format!("{shaped:?}"), format!("{full:?}"), "{line}");
        }
    }

    proptest! {
        // One line pair in four has a shape read by it: more cases than usual.
        #![proptest_config(ProptestConfig::with_cases(2048))]
        #[test]
        fn a_stream_reads_by_its_shape_what_a_full_read_gives(
            tokens in tokens(),
            numbers in prop::collection::vec(prop_oneof![8 => 0..4usize, 1 => 0..NUMBERS.len()], 40),
            others in tokens(),
            change_other in prop::bool::weighted(0.2),
        ) {
            let first = text(&tokens);
            // The same line with other numbers, as a run prints it next.
            let mut next = tokens.clone();
            for (t, n) in next.iter_mut().zip(&numbers) {
                if let Token::Number(i) = t {
                    *i = *n;
                }
            }
            if change_other {
                next.extend(others);
            }
            let second = text(&next);
            let (shaped, full) = both(&first, &second);
            prop_assert_eq!(
                format!("{shaped:?}"),
                format!("{full:?}"),
                "{:?} then {:?}",
                String::from_utf8_lossy(&first),
                String::from_utf8_lossy(&second)
            );
        }
    }
}
