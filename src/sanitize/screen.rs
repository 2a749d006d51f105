//! Screen mode: text for a cell grid Gantry draws itself (the TUI, locally or served). Escape
//! sequences go whole, so what is left reads as the operator would see it on a terminal.

use super::{is_bidi_override, is_c1};

/// Turns raw log bytes into printable text: invalid UTF-8 becomes U+FFFD, escape sequences
/// (CSI, OSC, DCS, SOS, PM, APC and two-byte ESC forms) are dropped whole, a carriage return
/// keeps what follows it (as a terminal would show a progress line), tabs become spaces, and any
/// other control character is shown as `^X`. The result contains no C0 or C1 control character.
pub fn screen(bytes: &[u8]) -> String {
    // The usual line: printable ASCII only, nothing to change.
    if bytes.iter().all(|b| (0x20..0x7f).contains(b)) {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let text = String::from_utf8_lossy(bytes);
    // A carriage return overwrites the line on a terminal: show what the operator would see last.
    let text = match text.rfind('\r') {
        Some(i) if i + 1 < text.len() => &text[i + 1..],
        _ => text.as_ref(),
    };
    let mut out = String::with_capacity(text.len());
    // Characters in `out` at the last tab, and `out`'s length in bytes then: tab stops are
    // counted in characters without walking the whole line again at every tab.
    let (mut counted_chars, mut counted_bytes) = (0, 0);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // C1 introducers have the same power as ESC sequences on some terminals.
            '\u{9b}' => skip_csi(&mut chars),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\t' => {
                counted_chars += out[counted_bytes..].chars().count();
                let pad = 4 - (counted_chars % 4);
                out.extend(std::iter::repeat_n(' ', pad));
                counted_chars += pad;
                counted_bytes = out.len();
            }
            '\r' | '\n' => {}
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push('^');
                out.push(char::from_u32((c as u32) ^ 0x40).unwrap_or('?'));
            }
            c if is_c1(c) || is_bidi_override(c) => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_escape(chars: &mut Chars<'_>) {
    match chars.next() {
        Some('[') => skip_csi(chars),
        Some(']' | 'P' | 'X' | '^' | '_') => skip_string(chars),
        // Character-set and other intermediate forms: ESC ( B, ESC # 8 …
        Some(' '..='/') => {
            chars.next();
        }
        _ => {}
    }
}

/// CSI: parameters and intermediates, then one final byte in @..~.
fn skip_csi(chars: &mut Chars<'_>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            return;
        }
        if (c as u32) < 0x20 && c != '\u{1b}' {
            continue;
        }
    }
}

/// OSC/DCS/SOS/PM/APC: everything up to BEL or ST (ESC \ or U+009C).
fn skip_string(chars: &mut Chars<'_>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sanitize::is_inert;

    #[test]
    fn strips_every_escape_form() {
        for (input, want) in [
            (&b"\x1b[2J\x1b[Hcleared"[..], "cleared"),
            (b"\x1b]0;title\x07after", "after"),
            (b"\x1b]52;c;ZWNobw==\x1b\\clip", "clip"),
            (b"\x1b[31mred\x1b[0m", "red"),
            (b"\x1b[?1049hscreen", "screen"),
            (b"\x1bP+q\x1b\\dcs", "dcs"),
            (b"\x1b(Bcharset", "charset"),
            (b"bell\x07nul\x00", "bell^Gnul^@"),
            (b"10%\r100%", "100%"),
            (b"a\tb", "a   b"),
            (
                b"\ta\x1b[1m\xc3\xa9\x1b[0m\tb\t\tc",
                "    a\u{e9}  b       c",
            ),
        ] {
            assert_eq!(screen(input), want, "{input:?}");
        }
    }

    #[test]
    fn invalid_utf8_and_c1_become_replacement() {
        let out = screen(b"bad \xff\xfe \xc2\x9b31m end");
        assert!(is_inert(&out), "{out:?}");
        assert!(out.starts_with("bad \u{fffd}\u{fffd}"));
    }

    #[test]
    fn huge_lines_are_handled() {
        let line = vec![b'A'; 1 << 20];
        assert_eq!(screen(&line).len(), 1 << 20);
    }
}
