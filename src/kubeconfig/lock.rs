//! The lock kubectl takes while it rewrites a kubeconfig: `<file>.lock`, created exclusively and
//! removed when done (client-go's `lockFile`). Gantry takes the same one around its read, merge
//! and write, so a `kubectl config` command or a `get-credentials` running at the same moment
//! cannot have its change overwritten by ours, nor ours by its.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Tries before giving up: kubectl holds the lock only while it writes one small file.
const TRIES: u32 = 10;
const PAUSE: Duration = Duration::from_millis(50);

/// Holds `<file>.lock` until dropped.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
}

#[derive(Debug)]
pub enum LockError {
    /// Another writer holds it (or one died holding it).
    Held(PathBuf),
    Io(std::io::Error),
}

impl Lock {
    pub fn take(file: &Path) -> Result<Lock, LockError> {
        let mut name = file.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(LockError::Io)?;
        }
        for attempt in 1..=TRIES {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(_) => return Ok(Lock { path }),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    if attempt < TRIES {
                        std::thread::sleep(PAUSE);
                    }
                }
                Err(e) => return Err(LockError::Io(e)),
            }
        }
        Err(LockError::Held(path))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
