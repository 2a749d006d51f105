//! `SIM_REPLAY=NAME`: the container writes a log captured from a real run, the file `NAME` in
//! the directory given to `gantry sim --replay-dir` (or `gantry --sim --replay-dir`), byte for
//! byte. A pod's environment is anyone's to write who may create a Job, so NAME can only name a
//! file in that directory: not a path, not `..`, not a link that leads out of it; no other file
//! on the host can be read this way. The file is streamed, never held whole.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use super::sink::{MAX_PIECE, Piece};

/// An open replay file, read piece by piece.
#[derive(Debug)]
pub struct Replay {
    reader: BufReader<tokio::fs::File>,
}

/// Why a replay cannot start or go on: the container's last log line.
fn refusal(name: &str, why: &str) -> String {
    format!("sim: SIM_REPLAY={name}: {why}")
}

/// Where `name` is inside `dir` (both resolved), or why it may not be read.
pub fn resolve(dir: Option<&Path>, name: &str) -> Result<PathBuf, String> {
    let Some(dir) = dir else {
        return Err(refusal(
            name,
            "no --replay-dir given to gantry sim (start it with `gantry sim --replay-dir DIR` or `gantry --sim --replay-dir DIR`)",
        ));
    };
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(refusal(
            name,
            "not a file name: give the name of a file in the replay directory, without '/' or '..'",
        ));
    }
    let dir = dir
        .canonicalize()
        .map_err(|e| refusal(name, &format!("the replay directory cannot be read: {e}")))?;
    let path = match dir.join(name).canonicalize() {
        Ok(path) => path,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(refusal(name, "no such file in the replay directory"));
        }
        Err(e) => return Err(refusal(name, &format!("cannot be read: {e}"))),
    };
    if !path.starts_with(&dir) {
        return Err(refusal(
            name,
            "a link that leads out of the replay directory: refused",
        ));
    }
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(path),
        Ok(_) => Err(refusal(name, "not a regular file")),
        Err(e) => Err(refusal(name, &format!("cannot be read: {e}"))),
    }
}

impl Replay {
    /// Opens `name` in `dir`, refusing anything but a regular file inside it.
    pub async fn open(dir: Option<&Path>, name: &str) -> Result<Self, String> {
        let path = resolve(dir, name)?;
        // The resolved path has no links left: one put there since is not followed.
        let file = tokio::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
            .await
            .map_err(|e| refusal(name, &format!("cannot be opened: {e}")))?;
        match file.metadata().await {
            Ok(meta) if meta.is_file() => Ok(Self {
                reader: BufReader::new(file),
            }),
            _ => Err(refusal(name, "not a regular file")),
        }
    }

    /// The next line (without its newline) or piece of a long or unterminated one, as the
    /// runtime would keep it; None at the end of the file.
    pub async fn next(&mut self) -> std::io::Result<Option<Piece>> {
        let mut buf = Vec::new();
        let n = (&mut self.reader)
            .take(MAX_PIECE as u64)
            .read_until(b'\n', &mut buf)
            .await?;
        if n == 0 {
            return Ok(None);
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            return Ok(Some((Bytes::from(buf), false)));
        }
        Ok(Some((Bytes::from(buf), true)))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    async fn all(replay: &mut Replay) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some((text, partial)) = replay.next().await.unwrap() {
            out.extend_from_slice(&text);
            if !partial {
                out.push(b'\n');
            }
        }
        out
    }

    #[tokio::test]
    async fn a_file_in_the_directory_comes_back_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = b"\r 10%|\r 20%|\r{'loss': nan}\n".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', 3 * MAX_PIECE + 5));
        bytes.extend_from_slice(b"\n\nlast line without newline \xff");
        std::fs::write(dir.path().join("run.log"), &bytes).unwrap();
        let mut replay = Replay::open(Some(dir.path()), "run.log").await.unwrap();
        assert_eq!(all(&mut replay).await, bytes);
    }

    #[tokio::test]
    async fn names_that_are_paths_or_lead_out_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "secret").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub").join("x"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
        for name in ["../x", "/etc/passwd", "a/b", "sub/x", "..", ".", "", "link"] {
            let err = Replay::open(Some(dir.path()), name).await.unwrap_err();
            assert!(
                err.starts_with(&format!("sim: SIM_REPLAY={name}: ")),
                "{err}"
            );
        }
        let err = Replay::open(Some(dir.path()), "link").await.unwrap_err();
        assert!(err.contains("leads out"), "{err}");
        let err = Replay::open(Some(dir.path()), "sub").await.unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let err = Replay::open(Some(dir.path()), "missing").await.unwrap_err();
        assert!(err.contains("no such file"), "{err}");
        let err = Replay::open(None, "x").await.unwrap_err();
        assert!(err.starts_with("sim: SIM_REPLAY=x: no --replay-dir given to gantry sim"));
    }

    #[tokio::test]
    async fn a_link_to_a_file_inside_the_directory_is_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.log"), "one\n").unwrap();
        std::os::unix::fs::symlink("a.log", dir.path().join("b.log")).unwrap();
        let mut replay = Replay::open(Some(dir.path()), "b.log").await.unwrap();
        assert_eq!(all(&mut replay).await, b"one\n");
    }
}
