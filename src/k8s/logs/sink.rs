//! A pod's log on disk: `<dir>/<pod>.log` holds exactly the container's bytes; `.<pod>.cursor`
//! beside it says how far that is, so a later session appends only what the file lacks.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::lines::Cursor;

#[derive(Debug)]
pub struct PodSink {
    file: File,
    path: PathBuf,
    cursor_path: PathBuf,
}

impl PodSink {
    /// Opens (creating) the pod's file and reads how far it got. A file without a readable
    /// cursor is started again from empty: the stream brings the whole log anyway.
    pub fn open(dir: &Path, pod: &str) -> std::io::Result<(Self, Cursor)> {
        std::fs::create_dir_all(dir)?;
        let pod = crate::k8s::names::path_component(pod);
        let path = dir.join(format!("{pod}.log"));
        let cursor_path = dir.join(format!(".{pod}.cursor"));
        let cursor = std::fs::read_to_string(&cursor_path)
            .ok()
            .and_then(|t| Cursor::decode(&t));
        let file = match cursor {
            Some(_) => OpenOptions::new().create(true).append(true).open(&path)?,
            None => OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .open(&path)?,
        };
        Ok((
            Self {
                file,
                path,
                cursor_path,
            },
            cursor.unwrap_or_default(),
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `bytes`, then records `cursor` (written aside and renamed, so it is never torn).
    pub fn append(&mut self, bytes: &[u8], cursor: Cursor) -> std::io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.file.write_all(bytes)?;
        let tmp = self.cursor_path.with_extension("cursor.tmp");
        std::fs::write(&tmp, cursor.encode())?;
        std::fs::rename(&tmp, &self.cursor_path)
    }
}
