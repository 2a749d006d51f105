//! A pod's log on disk: `<pod>.log` holds exactly the container's bytes; `.<pod>.cursor` beside
//! it says how far that is, and how long the file was then, so a later session appends only what
//! the file lacks.
//!
//! The cursor is written at most every [`CURSOR_INTERVAL`] and when the sink is dropped, not
//! after every append: a fast log would otherwise cost a file write and a rename per chunk. A
//! session that dies between two cursor writes leaves bytes past the recorded length; the next
//! one cuts the file back to that length and reads those lines again, so nothing is lost and
//! nothing is saved twice.
//!
//! One writer per file: a sink holds an exclusive advisory lock on `<pod>.log` (taken before the
//! cursor is read or the file cut) for as long as it lives. Another tail of the same pod into the
//! same directory — a second Gantry, `gantry logs -f` beside the TUI — cannot open a sink while
//! it is held, and shows the lines without saving them. The lock goes with the file handle, so a
//! session that dies releases it.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::lines::Cursor;

/// A second: each write is a system call or three (at every 250 ms they were a tenth of the TUI's
/// CPU following 1,000 lines a second, when each was a file written aside and renamed over); a
/// session that dies reads at most the last second's lines again.
pub const CURSOR_INTERVAL: Duration = Duration::from_secs(1);

/// Why a pod's log cannot be saved.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// Another sink holds the file: another Gantry (or another tail in this one) saves this log.
    #[error("another Gantry is saving this pod's log ({})", path.display())]
    Busy { path: PathBuf },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

#[derive(Debug)]
pub struct PodSink {
    file: File,
    path: PathBuf,
    cursor_path: PathBuf,
    /// Bytes in the file.
    len: u64,
    /// The cursor of the bytes written since the cursor file was last written.
    pending: Option<Cursor>,
    cursor_written: Instant,
}

impl PodSink {
    /// Opens (creating) the pod's file, locks it, and reads how far it got. A file without a
    /// readable cursor, or shorter than its cursor says, is started again from empty: the stream
    /// brings the whole log anyway. `SinkError::Busy`, at once, when another sink holds it.
    pub fn open(dir: &Path, pod: &str) -> Result<(Self, Cursor), SinkError> {
        std::fs::create_dir_all(dir)?;
        let pod = crate::paths::path_component(pod);
        let path = dir.join(format!("{pod}.log"));
        let cursor_path = dir.join(format!(".{pod}.cursor"));
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .truncate(false)
            .open(&path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(SinkError::Busy { path }),
            // A file system without locks: save as before, unguarded, rather than not at all.
            Err(std::fs::TryLockError::Error(e)) if e.kind() == ErrorKind::Unsupported => {
                tracing::warn!(path = %path.display(), "file locks unsupported: saving the log unlocked");
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
        }
        // Read only under the lock: the holder before may have moved it on.
        let recorded = std::fs::read_to_string(&cursor_path)
            .ok()
            .and_then(|t| decode(&t));
        let on_disk = file.metadata()?.len();
        let (cursor, len) = match recorded {
            // A cursor from before lengths were recorded vouches for the whole file.
            Some((cursor, None)) => (cursor, on_disk),
            Some((cursor, Some(len))) if len <= on_disk => (cursor, len),
            _ => (Cursor::default(), 0),
        };
        file.set_len(len)?;
        let mut sink = Self {
            file,
            path,
            cursor_path,
            len,
            pending: None,
            cursor_written: Instant::now(),
        };
        sink.file.seek(SeekFrom::End(0))?;
        Ok((sink, cursor))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `bytes`, which bring the file to `cursor`.
    pub fn append(&mut self, bytes: &[u8], cursor: Cursor) -> std::io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.file.write_all(bytes)?;
        self.len += bytes.len() as u64;
        self.pending = Some(cursor);
        if self.cursor_written.elapsed() >= CURSOR_INTERVAL {
            self.write_cursor()?;
        }
        Ok(())
    }

    /// Records the cursor of what has been appended: one line written over the start of the
    /// cursor file, in place. Only the first line is read back, so what a longer cursor before
    /// left after it does not count. (Written aside and renamed over, it cost the file system an
    /// inode each time: following 5,000 pods, creating those was a sixth of the TUI's CPU.) A
    /// process that dies mid-call leaves the old line or the new one whole: the write is one call
    /// of a few dozen bytes at the start of one page.
    pub fn write_cursor(&mut self) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let Some(cursor) = self.pending.take() else {
            return Ok(());
        };
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(&self.cursor_path)?;
        file.write_all_at(encode(cursor, self.len).as_bytes(), 0)?;
        self.cursor_written = Instant::now();
        Ok(())
    }
}

impl Drop for PodSink {
    fn drop(&mut self) {
        if let Err(e) = self.write_cursor() {
            tracing::warn!(path = %self.path.display(), error = %e, "cannot record how far the saved log got");
        }
    }
}

/// `ts at_ts partial len` and a newline; an empty line when nothing timed was delivered.
fn encode(cursor: Cursor, len: u64) -> String {
    let text = cursor.encode();
    match text.trim_end() {
        "" => "\n".to_string(),
        fields => format!("{fields} {len}\n"),
    }
}

/// The first line's cursor and length; what follows it is left over from a longer one.
fn decode(text: &str) -> Option<(Cursor, Option<u64>)> {
    let line = text.lines().next()?;
    let cursor = Cursor::decode(line)?;
    let len = line.split_whitespace().nth(3).and_then(|l| l.parse().ok());
    Some((cursor, len))
}
