//! Terminal escape sequences taken out of a log line before it is searched for metrics: colour
//! codes (`\x1b[32m`) sit between keys and values (Keras 3 prints its counters bold), and cursor
//! moves come with tqdm's nested bars. The usual line has none and is used as it is.

use memchr::memchr2;

use crate::sanitize::escape;

const ESC: u8 = 0x1b;
/// The first byte of a C1 control written as a character (U+0080–U+009F in UTF-8).
const C1_LEAD: u8 = 0xc2;

/// `line` without escape sequences: `line` itself when it has none, else a copy in `scratch`.
/// Other control characters (C0 and C1) become spaces, so they still separate what they stood
/// between. The grammar is the screen's own (`sanitize::escape`).
pub(crate) fn strip_escapes<'a>(line: &'a [u8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    if memchr2(ESC, C1_LEAD, line).is_none() {
        return line;
    }
    scratch.clear();
    let mut i = 0;
    while i < line.len() {
        if let Some(control) = escape::at(&line[i..]) {
            i += control.len;
            continue;
        }
        let b = line[i];
        if b == C1_LEAD && line.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)) {
            scratch.push(b' ');
            i += 2;
            continue;
        }
        scratch.push(if b < 0x20 && b != b'\t' { b' ' } else { b });
        i += 1;
    }
    scratch
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
    fn takes_out_character_set_choices_c1_controls_and_unfinished_sequences() {
        // `tput sgr0` writes `ESC ( B` after the colour reset: no stray `B` on the name.
        assert_eq!(strip(b"\x1b[1mloss\x1b(B\x1b[m=0.5"), "loss=0.5");
        assert_eq!(strip(b"\x1b)0acc=0.9"), "acc=0.9");
        assert_eq!(strip("\u{9b}32mloss=1\u{9b}0m".as_bytes()), "loss=1");
        assert_eq!(strip("\u{9d}0;t\u{9c}a=1\u{85}b=2".as_bytes()), "a=1 b=2");
        assert_eq!(strip(b"a=1 \x1b]0;never ends"), "a=1 ");
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
