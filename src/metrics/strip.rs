//! Terminal escape sequences taken out of a log line before it is searched for metrics: colour
//! codes (`\x1b[32m`) sit between keys and values (Keras 3 prints its counters bold), and cursor
//! moves come with tqdm's nested bars. The usual line has none and is used as it is.

use memchr::memchr;

const ESC: u8 = 0x1b;

/// `line` without escape sequences: `line` itself when it has none, else a copy in `scratch`.
/// Other control characters become spaces, so they still separate what they stood between.
pub(crate) fn strip_escapes<'a>(line: &'a [u8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    if memchr(ESC, line).is_none() {
        return line;
    }
    scratch.clear();
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        if b != ESC {
            scratch.push(if b < 0x20 && b != b'\t' { b' ' } else { b });
            i += 1;
            continue;
        }
        i = match line.get(i + 1) {
            // CSI: parameters and intermediates, then one final byte in 0x40..=0x7e.
            Some(b'[') => {
                let body = &line[i + 2..];
                let n = body
                    .iter()
                    .take_while(|b| !(0x40..=0x7e).contains(*b))
                    .count();
                (i + 2 + n + 1).min(line.len())
            }
            // OSC, DCS, SOS, PM, APC: up to BEL or ST (`ESC \`).
            Some(b']' | b'P' | b'X' | b'^' | b'_') => string_end(line, i + 2),
            Some(_) => i + 2,
            None => i + 1,
        };
    }
    scratch
}

/// Just past the BEL or ST that ends a control string starting at `from`, or the line's end.
fn string_end(line: &[u8], from: usize) -> usize {
    let mut j = from;
    while j < line.len() {
        match line[j] {
            0x07 => return j + 1,
            ESC if line.get(j + 1) == Some(&b'\\') => return j + 2,
            _ => j += 1,
        }
    }
    line.len()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn strip(line: &[u8]) -> String {
        let mut scratch = Vec::new();
        String::from_utf8_lossy(strip_escapes(line, &mut scratch)).into_owned()
    }

    #[test]
    fn takes_out_colour_codes_between_keys_and_values() {
        assert_eq!(
            strip(b"\x1b[1m469/469\x1b[0m \x1b[32m\xe2\x94\x81\x1b[0m - loss: \x1b[31m0.58\x1b[0m"),
            "469/469 \u{2501} - loss: 0.58"
        );
    }

    #[test]
    fn takes_out_titles_cursor_moves_and_truncated_sequences() {
        assert_eq!(
            strip(b"\x1b]0;title\x07a=1\x1b[A\x1b[2K b=2\x1b["),
            "a=1 b=2"
        );
        assert_eq!(strip(b"x\x1bP+q\x1b\\y\x1b"), "xy");
    }

    #[test]
    fn leaves_a_line_without_escapes_as_it_is() {
        let line = b"loss=1\x08";
        let mut scratch = Vec::new();
        assert!(std::ptr::eq(
            strip_escapes(line, &mut scratch),
            line.as_slice()
        ));
    }
}
