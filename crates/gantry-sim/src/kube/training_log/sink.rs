//! Container output to log lines as the kubelet's runtime cuts them: at `\n` only, so a
//! progress bar's `\r` redraws stay inside one line, and a line longer than 16 KiB is kept in
//! pieces that are marked as going on (containerd's partial lines), as is an unterminated last
//! line, so `kubectl logs` gives back exactly the bytes that were written.

use bytes::Bytes;

/// containerd's longest log line: longer ones are kept in pieces of this size.
pub const MAX_PIECE: usize = 16 * 1024;

/// One piece of output: its bytes without a newline, and whether none follows it.
pub type Piece = (Bytes, bool);

#[derive(Debug, Default)]
pub struct LineSink {
    pending: Vec<u8>,
    done: Vec<Piece>,
}

impl LineSink {
    /// A whole line, its newline implied, kept in one piece however long (as the workload's
    /// 1 MiB hostile line always was).
    pub fn line(&mut self, text: impl Into<Bytes>) {
        let text = text.into();
        if self.pending.is_empty() && memchr::memchr(b'\n', &text).is_none() {
            self.done.push((text, false));
        } else {
            self.write(&text);
            self.write(b"\n");
        }
    }

    /// A piece already cut as the runtime cuts (a replayed file's).
    pub fn piece(&mut self, (text, partial): Piece) {
        if self.pending.is_empty() {
            self.done.push((text, partial));
        } else {
            self.write(&text);
            if !partial {
                self.write(b"\n");
            }
        }
    }

    /// Raw output: lines end at each `\n`, the rest waits for more.
    pub fn write(&mut self, mut bytes: &[u8]) {
        while let Some(at) = memchr::memchr(b'\n', bytes) {
            self.keep(&bytes[..at]);
            let line = std::mem::take(&mut self.pending);
            self.done.push((Bytes::from(line), false));
            bytes = &bytes[at + 1..];
        }
        self.keep(bytes);
    }

    /// Ends an unfinished line (as a line printed by another stream would begin a new one).
    pub fn end_line(&mut self) {
        if !self.pending.is_empty() {
            self.write(b"\n");
        }
    }

    /// The output has ended: an unterminated last line is kept as it is.
    pub fn finish(&mut self) {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.done.push((Bytes::from(rest), true));
        }
    }

    /// The pieces completed so far.
    pub fn take(&mut self) -> Vec<Piece> {
        std::mem::take(&mut self.done)
    }

    fn keep(&mut self, mut bytes: &[u8]) {
        while self.pending.len() + bytes.len() > MAX_PIECE {
            let room = MAX_PIECE - self.pending.len();
            self.pending.extend_from_slice(&bytes[..room]);
            let piece = std::mem::take(&mut self.pending);
            self.done.push((Bytes::from(piece), true));
            bytes = &bytes[room..];
        }
        self.pending.extend_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(pieces: &[Piece]) -> Vec<u8> {
        let mut out = Vec::new();
        for (text, partial) in pieces {
            out.extend_from_slice(text);
            if !partial {
                out.push(b'\n');
            }
        }
        out
    }

    #[test]
    fn lines_end_only_at_newlines_and_carriage_returns_stay_inside() {
        let mut sink = LineSink::default();
        sink.write(b"\r 1%|\r 2%|");
        sink.write(b"\r{'loss': 1.0}\n\r 3%|");
        sink.line("Epoch 2/3");
        sink.finish();
        let pieces = sink.take();
        assert_eq!(
            pieces,
            vec![
                (Bytes::from("\r 1%|\r 2%|\r{'loss': 1.0}"), false),
                (Bytes::from("\r 3%|Epoch 2/3"), false),
            ]
        );
    }

    #[test]
    fn long_lines_and_an_unterminated_end_come_back_byte_for_byte() {
        let mut bytes = vec![b'x'; 40_000];
        bytes.extend_from_slice(b"\nshort\nno newline");
        let mut sink = LineSink::default();
        sink.write(&bytes[..100]);
        sink.write(&bytes[100..]);
        sink.finish();
        let pieces = sink.take();
        assert!(pieces.iter().all(|(t, _)| t.len() <= MAX_PIECE));
        assert_eq!(pieces.len(), 5);
        assert_eq!(joined(&pieces), bytes);
    }
}
