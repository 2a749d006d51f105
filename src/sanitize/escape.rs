//! The one grammar of terminal control sequences (ECMA-48) for everything that takes them out of
//! text: the screen sanitiser (`screen`) and the metrics reader (`metrics::strip`). Two readers
//! with two grammars disagreed at the edges — `ESC ( B`, what `tput sgr0` writes, left a stray
//! `B` in one of them, so `loss` could be read as `lossB` — so both ask here.
//!
//! A sequence is introduced by ESC or by a C1 introducer written as a character (U+009B CSI;
//! U+0090 DCS, U+0098 SOS, U+009D OSC, U+009E PM, U+009F APC, in UTF-8):
//! - CSI: parameter and intermediate bytes, then one final byte in `@`..`~`;
//! - DCS, SOS, OSC, PM, APC: a control string, ended by BEL, ST (`ESC \`) or U+009C;
//! - `ESC` intermediates (0x20–0x2f) then one final byte (0x30–0x7e): `ESC ( B`, `ESC ) 0`,
//!   `ESC # 8`; or `ESC` and one final byte (`ESC 7`, `ESC M`).
//!
//! A sequence that is not finished when the text ends runs to its end: nothing of it is shown.

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

/// A control sequence found at the start of some bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Control {
    /// How many bytes it spans (to the end of the text when it is not finished).
    pub len: usize,
    /// For a finished CSI: where its parameters are (a byte range of the text) and its final
    /// byte, which is all a reader of SGR (`ESC [ … m`) needs.
    pub csi: Option<Csi>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Csi {
    pub params: (usize, usize),
    pub final_byte: u8,
}

/// The control sequence that `bytes` starts with, if it starts with one.
pub fn at(bytes: &[u8]) -> Option<Control> {
    match bytes {
        [ESC, b'[', ..] => Some(csi(bytes, 2)),
        [ESC, b']' | b'P' | b'X' | b'^' | b'_', ..] => Some(string(bytes, 2)),
        [ESC, 0x20..=0x2f, ..] => {
            let intermediates = bytes[1..]
                .iter()
                .take_while(|b| (0x20..=0x2f).contains(*b))
                .count();
            let after = 1 + intermediates;
            let len = match bytes.get(after) {
                Some(0x30..=0x7e) => after + 1,
                Some(_) => after,
                None => bytes.len(),
            };
            Some(plain(len))
        }
        [ESC, 0x30..=0x7e, ..] => Some(plain(2)),
        [ESC, ..] => Some(plain(1)),
        [0xc2, 0x9b, ..] => Some(csi(bytes, 2)),
        [0xc2, 0x90 | 0x98 | 0x9d | 0x9e | 0x9f, ..] => Some(string(bytes, 2)),
        _ => None,
    }
}

fn plain(len: usize) -> Control {
    Control { len, csi: None }
}

/// CSI from `from`: parameters and intermediates, then the final byte.
fn csi(bytes: &[u8], from: usize) -> Control {
    let body = &bytes[from..];
    match body.iter().position(|b| (0x40..=0x7e).contains(b)) {
        Some(n) => Control {
            len: from + n + 1,
            csi: Some(Csi {
                params: (from, from + n),
                final_byte: body[n],
            }),
        },
        None => plain(bytes.len()),
    }
}

/// A control string from `from`, through its BEL or ST.
fn string(bytes: &[u8], from: usize) -> Control {
    let mut j = from;
    while j < bytes.len() {
        match bytes[j] {
            BEL => return plain(j + 1),
            ESC => {
                return plain(if bytes.get(j + 1) == Some(&b'\\') {
                    j + 2
                } else {
                    j + 1
                });
            }
            0xc2 if bytes.get(j + 1) == Some(&0x9c) => return plain(j + 2),
            _ => j += 1,
        }
    }
    plain(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn len(bytes: &[u8]) -> Option<usize> {
        at(bytes).map(|c| c.len)
    }

    #[test]
    fn every_form_is_read_to_its_end() {
        assert_eq!(len(b"\x1b[31mred"), Some(5));
        assert_eq!(len(b"\x1b[?25lx"), Some(6));
        assert_eq!(len(b"\x1b]0;title\x07x"), Some(10));
        assert_eq!(len(b"\x1b]8;;http://x\x1b\\x"), Some(15));
        assert_eq!(len(b"\x1bP+q\x1b\\y"), Some(6));
        // Character sets: what `tput sgr0` writes, and the line-drawing set.
        assert_eq!(len(b"\x1b(Bloss"), Some(3));
        assert_eq!(len(b"\x1b)0x"), Some(3));
        assert_eq!(len(b"\x1b#8x"), Some(3));
        assert_eq!(len(b"\x1b7x"), Some(2));
        assert_eq!(len(b"x\x1b["), None);
    }

    #[test]
    fn c1_introducers_written_as_characters_are_sequences_too() {
        assert_eq!(len("\u{9b}1mx".as_bytes()), Some(4));
        assert_eq!(len("\u{9d}0;t\u{9c}x".as_bytes()), Some(7));
        assert_eq!(len("\u{90}q\u{7}x".as_bytes()), Some(4));
        assert_eq!(len("\u{85}x".as_bytes()), None);
    }

    #[test]
    fn an_unfinished_sequence_runs_to_the_end() {
        for unfinished in [
            &b"\x1b["[..],
            b"\x1b[31",
            b"\x1b]0;title",
            b"\x1b(",
            b"\x1b",
            b"\x1bP",
        ] {
            assert_eq!(len(unfinished), Some(unfinished.len()), "{unfinished:?}");
        }
    }

    #[test]
    fn a_csi_says_where_its_parameters_are() {
        let c = at(b"\x1b[1;32mx").and_then(|c| c.csi);
        assert_eq!(
            c,
            Some(Csi {
                params: (2, 6),
                final_byte: b'm'
            })
        );
    }
}
