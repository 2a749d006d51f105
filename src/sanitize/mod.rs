//! Text from the cluster and the cloud made safe for the operator's terminal. Log lines, event
//! and condition messages, pod reasons, GKE operation details and error texts are untrusted: an
//! escape sequence could clear the screen, retitle the window, write the clipboard (OSC 52);
//! a bidirectional override could make a line read as something it is not. One sanitiser, three
//! modes, chosen by where the text goes:
//!
//! - [`Mode::Screen`]: a cell grid Gantry draws (the TUI). Sequences are dropped whole; a log
//!   line's colours are read out of them first ([`screen_styled`]) and drawn by the TUI itself.
//! - [`Mode::Terminal`]: a command's output on a terminal. Controls are shown inert and
//!   visible (`^[`), colours kept only when asked for.
//! - [`Mode::Raw`]: a pipe or a file. The bytes exactly, as `kubectl logs` gives them.

pub mod escape;
mod json;
mod screen;
pub mod sgr;
mod terminal;

use std::borrow::Cow;

pub use json::{to_json, to_json_pretty};
pub use screen::{Styled, screen, screen_styled};
pub use terminal::terminal;

/// Free text from the cluster or the cloud (a message, a reason) for one row of a screen:
/// screen mode, with line breaks as spaces.
pub fn one_line(text: &str) -> String {
    if text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return text.to_string();
    }
    screen(text.replace(['\n', '\r'], " ").as_bytes())
}

/// Where the text is going, and so how it is made safe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Screen,
    /// `color`: SGR colour sequences pass (and are reset at the end of the text).
    Terminal {
        color: bool,
    },
    Raw,
}

/// The bytes as `mode` lets them through.
pub fn apply(bytes: &[u8], mode: Mode) -> Cow<'_, [u8]> {
    match mode {
        Mode::Raw => Cow::Borrowed(bytes),
        Mode::Screen => Cow::Owned(screen(bytes).into_bytes()),
        Mode::Terminal { color } => match terminal(bytes, color) {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        },
    }
}

/// C1 controls (U+0080–U+009F): some terminals act on them as on ESC sequences.
pub fn is_c1(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c)
}

/// Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): they can
/// make a line display as something other than what it says.
pub fn is_bidi_override(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether text is free of anything a terminal would interpret: no C0 or C1 control, no DEL,
/// no bidirectional override.
pub fn is_inert(text: &str) -> bool {
    !text
        .chars()
        .any(|c| (c as u32) < 0x20 || c == '\u{7f}' || is_c1(c) || is_bidi_override(c))
}
