//! A `terminal` target is told through the terminals watching Gantry (the TUI, `gantry serve`'s
//! viewers), which write [`terminal_bytes`] to theirs: a bell, then a desktop notification in
//! both forms terminals know — OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty, foot, ghostty)
//! and OSC 777 (rxvt-unicode, Konsole, foot, WezTerm, ghostty). The text comes from a
//! container and is hostile: every control character (C0, DEL, C1) and bidirectional override
//! is removed, so nothing in it can end the sequence early or start another; the title has no
//! `;` (OSC 777's separator); both are bounded.

use super::message::{Message, bounded, plain};

const TITLE_MAX: usize = 80;
const BODY_MAX: usize = 200;

/// BEL, OSC 9 and OSC 777 for `event`.
pub fn terminal_bytes(event: &Message) -> Vec<u8> {
    let title = bounded(
        &inert(&format!("Gantry: {}", event.kind.title())).replace(';', ","),
        TITLE_MAX,
    );
    let body = bounded(
        &inert(&format!("{}: {}", event.subject(), event.text)),
        BODY_MAX,
    );
    let mut out = Vec::with_capacity(title.len() + 2 * body.len() + 32);
    out.push(0x07);
    // "Gantry: " first: OSC 9 text that starts with a digit and ';' means something else to
    // ConEmu (progress, and so on).
    out.extend_from_slice(format!("\x1b]9;{title}: {body}\x07").as_bytes());
    out.extend_from_slice(format!("\x1b]777;notify;{title};{body}\x07").as_bytes());
    out
}

/// Text with nothing a terminal acts on.
fn inert(text: &str) -> String {
    plain(text)
        .chars()
        .filter(|&c| !c.is_control() && !crate::sanitize::is_c1(c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::Kind;
    use crate::vocabulary::Severity;

    #[test]
    fn a_bell_and_both_notifications_carry_the_text() {
        let mut e = Message::new(
            Kind::AttemptEnded,
            Severity::Critical,
            "c",
            "attempt failed",
            "k",
        );
        e.job = Some("j".into());
        e.attempt = Some(2);
        let bytes = terminal_bytes(&e);
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "\x07\x1b]9;Gantry: Attempt ended: j #2 on c: attempt failed\x07\x1b]777;notify;Gantry: Attempt ended;j #2 on c: attempt failed\x07"
        );
    }

    #[test]
    fn hostile_text_cannot_end_the_sequence_early_or_start_another() {
        let hostile = "a\x07b\x1b\\c\x1b]52;c;cHduZWQ=\x07d\u{9c}e\u{9d}f\r\ng\u{7f}h\u{202e}i";
        let mut e = Message::new(Kind::Alert, Severity::Critical, hostile, hostile, "k");
        e.job = Some(hostile.into());
        let bytes = terminal_bytes(&e);
        // Exactly the three BELs Gantry writes, two ESCs (the OSC starts), nothing else below
        // 0x20, no DEL, no C1 (U+0080–U+009F, 0xC2 0x80–0x9F in UTF-8).
        assert_eq!(bytes.iter().filter(|&&b| b == 0x07).count(), 3);
        assert_eq!(bytes.iter().filter(|&&b| b == 0x1b).count(), 2);
        assert!(!bytes.iter().any(|&b| b < 0x20 && b != 0x07 && b != 0x1b));
        assert!(!bytes.contains(&0x7f));
        let text = String::from_utf8(bytes).unwrap();
        assert!(!text.chars().any(crate::sanitize::is_c1), "{text:?}");
        assert!(!text.contains('\u{202e}'));
        // The title has one field: OSC 777 is notify;title;body.
        let osc777 = text.split("\x1b]777;").nth(1).unwrap();
        assert_eq!(osc777.split(';').nth(1).unwrap(), "Gantry: Training alert");
    }

    #[test]
    fn the_sequences_are_bounded_however_long_the_text() {
        let e = Message::new(Kind::Alert, Severity::Info, "c", "x".repeat(100_000), "k");
        assert!(terminal_bytes(&e).len() < 2 * (TITLE_MAX + BODY_MAX) * 4 + 32);
    }
}
