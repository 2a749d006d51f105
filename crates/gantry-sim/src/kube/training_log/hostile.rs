//! What a hostile container prints now and then (`SIM_HOSTILE_OUTPUT`): escape sequences that
//! would clear, retitle or hijack a terminal, invalid UTF-8, control characters, and one 1 MiB
//! line.

use bytes::Bytes;

/// The hostile line that takes the place of update `i`, if any.
pub fn hostile_line(i: u64) -> Option<Bytes> {
    let line: Vec<u8> = match i % 10 {
        1 => b"\x1b[2J\x1b[Hscreen cleared by the container".to_vec(),
        2 => b"\x1b]0;pwned title\x07window title changed".to_vec(),
        3 => b"\x1b]52;c;ZWNobyBwd25lZA==\x07clipboard write attempt".to_vec(),
        4 => b"invalid utf-8: \xff\xfe\xc3\x28 end".to_vec(),
        5 => b"progress 10%\rprogress 100%\x08\x08 bell\x07 nul\x00 end".to_vec(),
        6 => b"\x1b[31mred\x1b[0m and \x1b[1;32mbold green\x1b[0m".to_vec(),
        7 => b"\x1b[?1049h\x1b[?25lalternate screen and hidden cursor\x1bP+q\x1b\\".to_vec(),
        8 if i % 1000 == 8 => {
            let mut big = b"one MiB line: ".to_vec();
            big.resize(1024 * 1024, b'A');
            big
        }
        _ => return None,
    };
    Some(Bytes::from(line))
}
