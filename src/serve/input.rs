//! An SSH client's keystrokes, which arrive as the raw bytes its terminal sends, turned into the
//! key events the TUI's key table knows. The parsing is termwiz's (wezterm's input parser): it
//! knows the sequences of xterm, VT220, rxvt and the kitty protocol, splits them across packet
//! boundaries, and tells a lone Esc from the start of a sequence when no more bytes follow —
//! which is exactly what a hand-written table gets wrong.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use termwiz::input::{InputEvent, InputParser, KeyCode as Tw, Modifiers};

/// One client's parser: bytes in, key events out.
pub struct Keys {
    parser: InputParser,
}

impl Default for Keys {
    fn default() -> Self {
        Self {
            parser: InputParser::new(),
        }
    }
}

/// How long an unfinished sequence (a lone Esc, so far) waits for the rest before it is taken
/// as it stands, as a terminal program's escape timeout.
pub const ESC_WAIT: std::time::Duration = std::time::Duration::from_millis(30);

impl Keys {
    /// The keys in `bytes`; an unfinished escape sequence waits for the next bytes, or for
    /// [`Keys::flush`] after [`ESC_WAIT`].
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<KeyEvent> {
        self.parse(bytes, true)
    }

    /// What is left, taken as it stands: a lone Esc is Esc.
    pub fn flush(&mut self) -> Vec<KeyEvent> {
        self.parse(&[], false)
    }

    fn parse(&mut self, bytes: &[u8], maybe_more: bool) -> Vec<KeyEvent> {
        let mut keys = Vec::new();
        self.parser.parse(
            bytes,
            |event| match event {
                InputEvent::Key(k) => keys.extend(key(k.key, k.modifiers)),
                // A paste is typed text: the search prompt takes it.
                InputEvent::Paste(text) => keys.extend(
                    text.chars()
                        .filter(|c| !c.is_control())
                        .map(|c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
                ),
                _ => {}
            },
            maybe_more,
        );
        keys
    }
}

fn key(code: Tw, modifiers: Modifiers) -> Option<KeyEvent> {
    let mut m = KeyModifiers::NONE;
    if modifiers.contains(Modifiers::SHIFT) {
        m |= KeyModifiers::SHIFT;
    }
    if modifiers.contains(Modifiers::CTRL) {
        m |= KeyModifiers::CONTROL;
    }
    if modifiers.contains(Modifiers::ALT) {
        m |= KeyModifiers::ALT;
    }
    let code = match code {
        Tw::Char('\r' | '\n') => KeyCode::Enter,
        Tw::Char('\t') if m.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
        Tw::Char('\t') => KeyCode::Tab,
        Tw::Char('\u{7f}' | '\u{8}') => KeyCode::Backspace,
        Tw::Char('\u{1b}') => KeyCode::Esc,
        // Ctrl-A … Ctrl-Z as the byte 0x01 … 0x1a, when the parser leaves them as controls.
        Tw::Char(c @ '\u{1}'..='\u{1a}') => {
            m |= KeyModifiers::CONTROL;
            KeyCode::Char((b'a' + (c as u8) - 1) as char)
        }
        Tw::Char(c) if c.is_control() => return None,
        Tw::Char(c) => KeyCode::Char(c),
        Tw::Enter => KeyCode::Enter,
        Tw::Escape => KeyCode::Esc,
        Tw::Backspace => KeyCode::Backspace,
        Tw::Tab if m.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
        Tw::Tab => KeyCode::Tab,
        Tw::UpArrow | Tw::ApplicationUpArrow => KeyCode::Up,
        Tw::DownArrow | Tw::ApplicationDownArrow => KeyCode::Down,
        Tw::LeftArrow | Tw::ApplicationLeftArrow => KeyCode::Left,
        Tw::RightArrow | Tw::ApplicationRightArrow => KeyCode::Right,
        Tw::PageUp => KeyCode::PageUp,
        Tw::PageDown => KeyCode::PageDown,
        Tw::Home => KeyCode::Home,
        Tw::End => KeyCode::End,
        Tw::Insert => KeyCode::Insert,
        Tw::Delete => KeyCode::Delete,
        Tw::Function(n) => KeyCode::F(n),
        _ => return None,
    };
    // Shift is part of an upper-case letter already; the key table matches on the letter.
    if let KeyCode::Char(c) = code
        && !c.is_ascii_lowercase()
    {
        m.remove(KeyModifiers::SHIFT);
    }
    if code == KeyCode::BackTab {
        m |= KeyModifiers::SHIFT;
    }
    Some(KeyEvent::new(code, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(bytes: &[u8]) -> Vec<(KeyCode, KeyModifiers)> {
        let mut k = Keys::default();
        let mut got = k.feed(bytes);
        got.extend(k.flush());
        got.into_iter().map(|k| (k.code, k.modifiers)).collect()
    }

    const NONE: KeyModifiers = KeyModifiers::NONE;

    #[test]
    fn the_keys_an_operator_uses_arrive_as_the_tui_knows_them() {
        assert_eq!(keys(b"c"), [(KeyCode::Char('c'), NONE)]);
        assert_eq!(keys(b"G"), [(KeyCode::Char('G'), NONE)]);
        assert_eq!(keys(b"\x1b[A"), [(KeyCode::Up, NONE)]);
        assert_eq!(keys(b"\x1bOB"), [(KeyCode::Down, NONE)]);
        assert_eq!(keys(b"\x1b[5~"), [(KeyCode::PageUp, NONE)]);
        assert_eq!(keys(b"\x1b[6~"), [(KeyCode::PageDown, NONE)]);
        assert_eq!(keys(b"\x1b[H"), [(KeyCode::Home, NONE)]);
        assert_eq!(keys(b"\x1b[F"), [(KeyCode::End, NONE)]);
        assert_eq!(keys(b"\x1b[Z"), [(KeyCode::BackTab, KeyModifiers::SHIFT)]);
        assert_eq!(keys(b"\r"), [(KeyCode::Enter, NONE)]);
        assert_eq!(keys(b"\t"), [(KeyCode::Tab, NONE)]);
        assert_eq!(keys(b"\x7f"), [(KeyCode::Backspace, NONE)]);
    }

    #[test]
    fn a_lone_esc_is_esc_once_nothing_follows_and_ctrl_c_is_ctrl_c() {
        let mut k = Keys::default();
        assert_eq!(k.feed(b"\x1b"), []);
        assert_eq!(
            k.flush().into_iter().map(|k| k.code).collect::<Vec<_>>(),
            [KeyCode::Esc]
        );
        assert_eq!(keys(b"\x1b"), [(KeyCode::Esc, NONE)]);
        assert_eq!(keys(b"\x03"), [(KeyCode::Char('c'), KeyModifiers::CONTROL)]);
    }

    #[test]
    fn a_sequence_split_across_packets_is_one_key() {
        let mut k = Keys::default();
        let mut got = k.feed(b"j\x1b[");
        got.extend(k.feed(b"B"));
        let codes: Vec<KeyCode> = got.into_iter().map(|k| k.code).collect();
        assert_eq!(codes, [KeyCode::Char('j'), KeyCode::Down]);
    }
}
