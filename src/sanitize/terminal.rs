//! Terminal-text mode: a command's output on the operator's terminal. Nothing is hidden (the
//! operator sees that a line held an escape sequence, as `less` and `cat -v` show it) and
//! nothing is acted on.

use std::borrow::Cow;
use std::fmt::Write;

use super::{is_bidi_override, is_c1};

/// Makes text inert for a terminal: ESC and every other C0 control become `^[`-style caret
/// notation, DEL `^?`, C1 controls and bidirectional overrides `<U+XXXX>`; invalid UTF-8
/// becomes U+FFFD. Tabs and newlines stay; a carriage return that ends a line (CRLF output) is
/// dropped, elsewhere shown as `^M` so it cannot hide what came before it. With `color`,
/// well-formed SGR sequences (`ESC [ digits;… m`) pass, and colour is reset at the end.
pub fn terminal(bytes: &[u8], color: bool) -> Cow<'_, str> {
    if bytes
        .iter()
        .all(|&b| (0x20..0x7f).contains(&b) || b == b'\t' || b == b'\n')
    {
        return String::from_utf8_lossy(bytes);
    }
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len() + 16);
    let mut coloured = false;
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\u{1b}' if color => match sgr_len(&text[i..]) {
                Some(len) => {
                    out.push_str(&text[i..i + len]);
                    coloured = true;
                    // The sequence is ASCII: skip its remaining characters.
                    for _ in 1..len {
                        chars.next();
                    }
                }
                None => out.push_str("^["),
            },
            '\t' | '\n' => out.push(c),
            '\r' if matches!(text.as_bytes().get(i + 1), None | Some(b'\n')) => {}
            c if (c as u32) < 0x20 => {
                out.push('^');
                out.push(char::from(c as u8 ^ 0x40));
            }
            '\u{7f}' => out.push_str("^?"),
            c if is_c1(c) || is_bidi_override(c) => {
                let _ = write!(out, "<U+{:04X}>", c as u32);
            }
            c => out.push(c),
        }
    }
    if coloured {
        out.push_str("\u{1b}[0m");
    }
    Cow::Owned(out)
}

/// The length of the SGR sequence at the start of `text`, if it is one: ESC `[`, parameters
/// (digits, `;`, `:`), then `m`. Anything else is not a colour and is shown.
fn sgr_len(text: &str) -> Option<usize> {
    let params = text.strip_prefix("\u{1b}[")?;
    let n = params
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';' || *b == b':')
        .count();
    (params.as_bytes().get(n) == Some(&b'm')).then_some(2 + n + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_not_acted_on() {
        for (input, want) in [
            (
                &b"\x1b]0;pwned title\x07after"[..],
                "^[]0;pwned title^Gafter",
            ),
            (b"\x1b]52;c;ZWNobw==\x1b\\", "^[]52;c;ZWNobw==^[\\"),
            (b"\x1b[2J\x1b[H", "^[[2J^[[H"),
            (b"10%\r100%", "10%^M100%"),
            (b"crlf\r", "crlf"),
            (b"two\r\nlines\r\n", "two\nlines\n"),
            (b"del\x7f bs\x08", "del^? bs^H"),
            (b"a\tb", "a\tb"),
            (b"plain", "plain"),
        ] {
            assert_eq!(terminal(input, false), want, "{input:?}");
        }
    }

    #[test]
    fn c1_controls_and_bidi_overrides_are_named() {
        assert_eq!(
            terminal("\u{9b}31m \u{202e}txt.exe\u{2066}".as_bytes(), true),
            "<U+009B>31m <U+202E>txt.exe<U+2066>"
        );
        assert_eq!(terminal(b"bad \xff end", false), "bad \u{fffd} end");
    }

    #[test]
    fn colours_pass_only_when_asked_and_are_reset() {
        let red = b"\x1b[1;31mred\x1b[0m plain";
        assert_eq!(terminal(red, false), "^[[1;31mred^[[0m plain");
        assert_eq!(terminal(red, true), "\x1b[1;31mred\x1b[0m plain\x1b[0m");
        // Colour on does not let anything but SGR through.
        assert_eq!(
            terminal(b"\x1b[2Jx\x1b[38:5:1m", true),
            "^[[2Jx\x1b[38:5:1m\x1b[0m"
        );
    }
}
