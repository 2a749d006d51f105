//! Screen mode: text for a cell grid Gantry draws itself (the TUI, locally or served). Escape
//! sequences go whole, so what is left reads as the operator would see it on a terminal.

use std::borrow::Cow;

use super::escape;
use super::sgr::{Ink, Run};
use super::{is_bidi_override, is_c1};

/// Turns raw log bytes into printable text: invalid UTF-8 becomes U+FFFD, escape sequences
/// (CSI, OSC, DCS, SOS, PM, APC and two-byte ESC forms) are dropped whole, a carriage return
/// keeps what follows it (as a terminal would show a progress line), tabs become spaces, and any
/// other control character is shown as `^X`. The result contains no C0 or C1 control character.
pub fn screen(bytes: &[u8]) -> String {
    render(bytes, None).into_owned()
}

/// A line for the screen with its colours: [`screen`]'s text, and where the container's SGR
/// sequences change how it looks (empty for a line without any; the first run may start after
/// byte 0, text before it is plain). Only colour and emphasis are read from the sequences.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Styled<'a> {
    /// The bytes themselves when they are printable ASCII already (the usual line).
    pub text: Cow<'a, str>,
    pub runs: Vec<Run>,
}

pub fn screen_styled(bytes: &[u8]) -> Styled<'_> {
    let mut runs = Vec::new();
    let text = render(bytes, Some(&mut runs));
    Styled { text, runs }
}

/// Where the SGR state is kept while a line is read, and the runs it makes.
struct Inks<'a> {
    runs: &'a mut Vec<Run>,
    ink: Ink,
}

impl Inks<'_> {
    /// The ink changed at byte `at` of the output: a run starts there (or the last one, if
    /// nothing was written since it began, is changed).
    fn mark(&mut self, at: usize) {
        let start = u32::try_from(at).unwrap_or(u32::MAX);
        if self.runs.last().is_some_and(|r| r.start == start) {
            self.runs.pop();
        }
        let before = self.runs.last().map(|r| r.ink).unwrap_or_default();
        if before != self.ink {
            self.runs.push(Run {
                start,
                ink: self.ink,
            });
        }
    }
}

fn render<'a>(bytes: &'a [u8], runs: Option<&mut Vec<Run>>) -> Cow<'a, str> {
    // The usual line: printable ASCII only, nothing to change (checked without stopping early,
    // which compiles to a few wide comparisons instead of one branch per byte).
    let printable = bytes
        .iter()
        .fold(true, |all, &b| all & (0x20..0x7f).contains(&b));
    if printable && let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    let mut inks = runs.map(|runs| Inks {
        runs,
        ink: Ink::default(),
    });
    let text = String::from_utf8_lossy(bytes);
    // A carriage return overwrites the line on a terminal: show what the operator would see
    // last, in the colours set before it.
    let text = match text.rfind('\r') {
        Some(i) if i + 1 < text.len() => {
            if let Some(inks) = inks.as_mut() {
                let mut ignored = String::new();
                walk(&text[..i], &mut ignored, Some(inks));
                inks.runs.clear();
            }
            &text[i + 1..]
        }
        _ => text.as_ref(),
    };
    let mut out = String::with_capacity(text.len());
    if let Some(inks) = inks.as_mut() {
        inks.mark(0);
    }
    walk(text, &mut out, inks.as_mut());
    // A change with nothing after it changes nothing.
    if let Some(inks) = inks
        && inks
            .runs
            .last()
            .is_some_and(|r| r.start as usize >= out.len())
    {
        inks.runs.pop();
    }
    Cow::Owned(out)
}

/// Writes `text` to `out` as the screen shows it, reading SGR into `inks` when given. What is a
/// control sequence, and where it ends, is the one grammar's (`escape`).
fn walk(text: &str, out: &mut String, mut inks: Option<&mut Inks<'_>>) {
    // Characters in `out` at the last tab, and `out`'s length in bytes then: tab stops are
    // counted in characters without walking the whole line again at every tab.
    let (mut counted_chars, mut counted_bytes) = (0, 0);
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if let Some(control) = escape::at(&bytes[i..]) {
            if let (Some(inks), Some(csi)) = (inks.as_deref_mut(), control.csi) {
                let params = &text[i + csi.params.0..i + csi.params.1];
                if csi.final_byte == b'm' && is_sgr(params) {
                    inks.ink.apply(params);
                    inks.mark(out.len());
                }
            }
            i += control.len;
            continue;
        }
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        i += c.len_utf8();
        match c {
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
}

/// SGR parameters: digits, `;` and `:` only (a private or intermediate form is not SGR), and
/// not without end.
fn is_sgr(params: &str) -> bool {
    params.len() <= 256
        && params
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b';' || b == b':')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sanitize::is_inert;
    use crate::sanitize::sgr::{Tint, marks};

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
            (b"\x1b)0line\x1b#8", "line"),
            (b"tput\x1b[m\x1b(B sgr0", "tput sgr0"),
            (b"open \x1b]0;never ends", "open "),
            (b"open \x1b[31", "open "),
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

    fn run(start: u32, fg: Tint, marks: u8) -> Run {
        Run {
            start,
            ink: Ink {
                fg,
                bg: Tint::Default,
                marks,
            },
        }
    }

    #[test]
    fn colours_become_runs_over_the_same_text_screen_gives() {
        let input = b"\x1b[1;31mERROR\x1b[0m disk \x1b[32mok\x1b[m done\x1b]0;t\x07";
        let styled = screen_styled(input);
        assert_eq!(styled.text, screen(input));
        assert_eq!(styled.text, "ERROR disk ok done");
        assert_eq!(
            styled.runs,
            [
                run(0, Tint::Indexed(1), marks::BOLD),
                run(5, Tint::Default, 0),
                run(11, Tint::Indexed(2), 0),
                run(13, Tint::Default, 0),
            ]
        );
    }

    #[test]
    fn a_carriage_return_keeps_the_colour_set_before_it() {
        let styled = screen_styled(b"\x1b[36m 10%\r100% \x1b[0m");
        assert_eq!(styled.text, "100% ");
        assert_eq!(styled.runs, [run(0, Tint::Indexed(6), 0)]);
    }

    #[test]
    fn only_colour_and_emphasis_are_read_from_escapes() {
        for input in [
            &b"\x1b[?25lhidden cursor"[..],
            b"\x1b[2J\x1b[Hcleared",
            b"\x1b[>4;2mmodify keys",
            b"\x1b[1 mspace intermediate",
            b"\x1b]52;c;ZWNobw==\x1b\\clip",
            b"plain",
            b"\x1b[31m\x1b[0mnothing coloured",
        ] {
            let styled = screen_styled(input);
            assert_eq!(styled.text, screen(input), "{input:?}");
            assert!(styled.runs.is_empty(), "{input:?}: {:?}", styled.runs);
            assert!(is_inert(&styled.text));
        }
    }

    #[test]
    fn a_colour_set_and_changed_at_once_makes_one_run() {
        let styled = screen_styled(b"a\x1b[31m\x1b[32m\x1b[1mb\x1b[0m\x1b[0m");
        assert_eq!(styled.runs, [run(1, Tint::Indexed(2), marks::BOLD)]);
    }

    #[test]
    fn huge_lines_are_handled() {
        let line = vec![b'A'; 1 << 20];
        assert_eq!(screen(&line).len(), 1 << 20);
    }
}
