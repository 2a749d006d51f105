//! An SSH client's keystrokes, which arrive as the raw bytes its terminal sends, turned into the
//! key events the TUI's key table knows. The parsing is termina's (Helix's terminal library,
//! its parser ported from crossterm's): it knows the sequences of xterm, VT220, rxvt and the
//! kitty protocol, waits across packet boundaries for the rest of a sequence, and tells a lone
//! Esc from the start of a sequence when no more bytes follow — which is exactly what a
//! hand-written table gets wrong.
//!
//! Bounded whatever a client sends: at most `MAX_KEYS_PER_FEED` keys from one read (nobody types
//! faster; a paste beyond it is dropped), and a sequence still unfinished after
//! `MAX_PENDING_BYTES` (a bracketed paste that never ends, garbage) is thrown away, parser and
//! all, so the parser never holds more than that. The parser reads what it holds again from the
//! start on every read, so the bound is small: a client sending a never-ending paste a byte a
//! packet costs a few microseconds a byte, and a paste into the search prompt (200 characters at
//! most) fits many times over.
//!
//! The parser sees valid UTF-8 only: bytes that are not (a stray 0x80, a cut-off sequence that
//! never completes) are dropped first, so a paste's text is the client's own.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use termina::event::{KeyCode as Tk, KeyEventKind, Modifiers};
use termina::{Event, Parser};

/// Keys taken from one read of the client's bytes, at most.
pub const MAX_KEYS_PER_FEED: usize = 256;
/// Bytes fed without a key coming out, at most, before the parser starts again.
pub const MAX_PENDING_BYTES: usize = 2 * 1024;

/// One client's parser: bytes in, key events out.
#[derive(Default)]
pub struct Keys {
    parser: Parser,
    /// Bytes fed since the last key came out: what the parser may be holding.
    pending: usize,
    /// The start of a UTF-8 character whose rest has not arrived yet (3 bytes at most).
    partial: Vec<u8>,
}

/// The valid UTF-8 of `bytes` (after `partial`, the unfinished character of the last read),
/// leaving in `partial` the start of a character still to come.
fn valid_utf8(partial: &mut Vec<u8>, bytes: &[u8]) -> Vec<u8> {
    let mut rest = std::mem::take(partial);
    rest.extend_from_slice(bytes);
    let mut out = Vec::with_capacity(rest.len());
    let mut at = 0;
    while at < rest.len() {
        match std::str::from_utf8(&rest[at..]) {
            Ok(text) => {
                out.extend_from_slice(text.as_bytes());
                break;
            }
            Err(e) => {
                let good = at + e.valid_up_to();
                out.extend_from_slice(&rest[at..good]);
                match e.error_len() {
                    Some(bad) => at = good + bad,
                    None => {
                        partial.extend_from_slice(&rest[good..]);
                        break;
                    }
                }
            }
        }
    }
    out
}

/// How long an unfinished sequence (a lone Esc, so far) waits for the rest before it is taken
/// as it stands, as a terminal program's escape timeout.
pub const ESC_WAIT: std::time::Duration = std::time::Duration::from_millis(30);

impl Keys {
    /// The keys in `bytes`; an unfinished escape sequence waits for the next bytes, or for
    /// [`Keys::flush`] after [`ESC_WAIT`].
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<KeyEvent> {
        let mut keys = Vec::new();
        let bytes = valid_utf8(&mut self.partial, bytes);
        // Fed in pieces, so an unfinished sequence is cut before it grows past the bound.
        for piece in bytes.chunks(MAX_PENDING_BYTES) {
            let (got, events) = self.parse(piece, true, MAX_KEYS_PER_FEED - keys.len());
            keys.extend(got);
            if events {
                self.pending = 0;
            } else {
                self.pending += piece.len();
            }
            if self.pending >= MAX_PENDING_BYTES {
                self.parser = Parser::default();
                self.pending = 0;
            }
        }
        keys
    }

    /// What is left, taken as it stands: a lone Esc is Esc.
    pub fn flush(&mut self) -> Vec<KeyEvent> {
        self.pending = 0;
        self.partial.clear();
        self.parse(&[], false, MAX_KEYS_PER_FEED).0
    }

    /// Bytes the parser may be holding for a sequence not finished yet.
    #[cfg(test)]
    fn pending(&self) -> usize {
        self.pending
    }

    /// The keys of `bytes`, at most `room`; and whether any event came out at all. Every event
    /// is taken out of the parser, kept or not, so it holds none.
    fn parse(&mut self, bytes: &[u8], maybe_more: bool, room: usize) -> (Vec<KeyEvent>, bool) {
        self.parser.parse(bytes, maybe_more);
        let mut keys = Vec::new();
        let mut events = false;
        while let Some(event) = self.parser.pop() {
            events = true;
            match event {
                Event::Key(k) if k.kind != KeyEventKind::Release => {
                    if let Some(k) = key(k.code, k.modifiers)
                        && keys.len() < room
                    {
                        keys.push(k);
                    }
                }
                // A paste is typed text: the search prompt takes it.
                Event::Paste(text) => {
                    let left = room.saturating_sub(keys.len());
                    keys.extend(
                        text.chars()
                            .filter(|c| !c.is_control())
                            .take(left)
                            .map(|c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
                    );
                }
                _ => {}
            }
        }
        (keys, events)
    }
}

fn key(code: Tk, modifiers: Modifiers) -> Option<KeyEvent> {
    let mut m = KeyModifiers::NONE;
    if modifiers.contains(Modifiers::SHIFT) {
        m |= KeyModifiers::SHIFT;
    }
    if modifiers.contains(Modifiers::CONTROL) {
        m |= KeyModifiers::CONTROL;
    }
    if modifiers.contains(Modifiers::ALT) {
        m |= KeyModifiers::ALT;
    }
    let code = match code {
        // Line feed and backspace arrive as the control bytes of Ctrl-J and Ctrl-H.
        Tk::Char('j') if m == KeyModifiers::CONTROL => {
            m = KeyModifiers::NONE;
            KeyCode::Enter
        }
        Tk::Char('h') if m == KeyModifiers::CONTROL => {
            m = KeyModifiers::NONE;
            KeyCode::Backspace
        }
        Tk::Char(c) if c.is_control() => return None,
        Tk::Char(c) => KeyCode::Char(c),
        Tk::Enter => KeyCode::Enter,
        Tk::Escape => KeyCode::Esc,
        Tk::Backspace => KeyCode::Backspace,
        Tk::Tab if m.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
        Tk::Tab => KeyCode::Tab,
        Tk::BackTab => KeyCode::BackTab,
        Tk::Up => KeyCode::Up,
        Tk::Down => KeyCode::Down,
        Tk::Left => KeyCode::Left,
        Tk::Right => KeyCode::Right,
        Tk::PageUp => KeyCode::PageUp,
        Tk::PageDown => KeyCode::PageDown,
        Tk::Home => KeyCode::Home,
        Tk::End => KeyCode::End,
        Tk::Insert => KeyCode::Insert,
        Tk::Delete => KeyCode::Delete,
        Tk::Function(n) => KeyCode::F(n),
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
    fn line_feed_and_ctrl_h_are_enter_and_backspace_and_a_release_is_no_key() {
        assert_eq!(keys(b"\n"), [(KeyCode::Enter, NONE)]);
        assert_eq!(keys(b"\x08"), [(KeyCode::Backspace, NONE)]);
        assert_eq!(keys(b"\x1bq"), [(KeyCode::Char('q'), KeyModifiers::ALT)]);
        // The kitty protocol's press and release of `q`: one key.
        assert_eq!(
            keys(b"\x1b[113u\x1b[113;1:3u"),
            [(KeyCode::Char('q'), NONE)]
        );
    }

    #[test]
    fn a_paste_without_end_sent_a_byte_at_a_time_is_dropped_within_the_bound() {
        let mut k = Keys::default();
        let _ = k.feed(b"\x1b[200~");
        for _ in 0..3 * MAX_PENDING_BYTES {
            let _ = k.feed(b"x");
            assert!(k.pending() < MAX_PENDING_BYTES);
        }
        let mut k = Keys::default();
        let _ = k.feed(b"\x1b[200~");
        for _ in 0..MAX_PENDING_BYTES {
            let _ = k.feed(b"x");
        }
        assert_eq!(
            k.feed(b"q").iter().map(|k| k.code).collect::<Vec<_>>(),
            [KeyCode::Char('q')]
        );
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
    fn a_paste_that_never_ends_is_dropped_and_the_keys_after_it_still_arrive() {
        let mut k = Keys::default();
        let mut got = k.feed(b"\x1b[200~");
        for _ in 0..200 {
            got.extend(k.feed(&[b'x'; 32 * 1024]));
            assert!(k.pending() < MAX_PENDING_BYTES);
        }
        assert!(got.len() <= MAX_KEYS_PER_FEED * 201);
        // The parser started again: plain keys are keys.
        let mut k2 = Keys::default();
        let _ = k2.feed(b"\x1b");
        let _ = k2.feed(b"[200~");
        let _ = k2.feed(&vec![b'y'; MAX_PENDING_BYTES]);
        let after = k2.feed(b"q");
        assert_eq!(
            after.iter().map(|k| k.code).collect::<Vec<_>>(),
            [KeyCode::Char('q')]
        );
    }

    #[test]
    fn invalid_utf8_in_a_bracketed_paste_is_dropped_and_the_paste_still_arrives() {
        let mut k = Keys::default();
        let got = k.feed(b"\x1b[200~a\xff\xfeb\x1b[201~");
        let typed: String = got
            .iter()
            .filter_map(|k| match k.code {
                KeyCode::Char(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(typed, "ab");
        // A character cut across reads is one character.
        let mut k = Keys::default();
        assert!(k.feed(&[0xc3]).is_empty());
        let e = k.feed(&[0xa9]);
        assert_eq!(
            e.iter().map(|k| k.code).collect::<Vec<_>>(),
            [KeyCode::Char('é')]
        );
    }

    #[test]
    fn a_hundred_megabytes_of_keys_in_one_read_give_a_bounded_number() {
        let mut k = Keys::default();
        let got = k.feed(&vec![b'j'; 1024 * 1024]);
        assert_eq!(got.len(), MAX_KEYS_PER_FEED);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// Whatever a client sends, cut wherever its packets fall: no panic, a bounded number of
        /// keys a read, a bounded number of bytes held.
        #[test]
        fn arbitrary_bytes_in_arbitrary_pieces_never_panic_or_grow(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..4096),
            cuts in proptest::collection::vec(0usize..4096, 0..16),
            escapes in proptest::collection::vec(
                proptest::sample::select(vec![
                    &b"\x1b["[..], b"\x1b[200~", b"\x1b[201~", b"\x1bO", b"\x1b]", b"\x1bP",
                    b"\x9b", b"\x1b[<0;1;1M", b"\x1b[M", b"\x1b_", b"\x07", b"\x1b\\",
                ]),
                0..8,
            ),
        ) {
            let mut all = bytes.clone();
            for (i, e) in escapes.iter().enumerate() {
                let at = (i * 397) % (all.len() + 1);
                all.splice(at..at, e.iter().copied());
            }
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (all.len() + 1)).collect();
            cuts.sort_unstable();
            let mut k = Keys::default();
            let mut from = 0;
            for cut in cuts.into_iter().chain(std::iter::once(all.len())) {
                let got = k.feed(&all[from..cut]);
                proptest::prop_assert!(got.len() <= MAX_KEYS_PER_FEED);
                proptest::prop_assert!(k.pending() < MAX_PENDING_BYTES);
                from = cut;
            }
            proptest::prop_assert!(k.flush().len() <= MAX_KEYS_PER_FEED);
        }
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
