//! Code without an image: a directory's files (as git sees them, `files`) go with an attempt as
//! one archive (`archive`) in a ConfigMap of its own and are unpacked into the training
//! container's working directory (`mount`), on a public base image — no Dockerfile, no
//! registry. Each attempt records what it ran (`record`: a `digest` over paths, modes and
//! contents, the size, the directory, the `git` commit), so a retry or a recovery runs the same
//! code by copying its ConfigMap, never by reading the directory again.
//!
//! Everything is checked before any object is made: what cannot go is an error that says what
//! to do, never a silently missing file.

pub mod archive;
pub mod digest;
pub mod files;
pub mod git;
pub mod mount;
pub mod record;

use std::path::{Path, PathBuf};

pub use record::{CodeRecord, size_said};

/// The image code runs on when the config names none: Docker Hub's official Python image
/// (Debian, with `tar` to unpack the code), public, so nothing is built or pushed.
pub const DEFAULT_IMAGE: &str = "python:3.12-slim";

/// Kubernetes' limit on a ConfigMap's data: 1 MiB (`ValidateConfigMap` sums the decoded bytes
/// of `data` and `binaryData` against `MaxSecretSize`, pkg/apis/core/validation).
pub const OBJECT_LIMIT: u64 = 1024 * 1024;
/// Kept for the object's own metadata (names, labels, owner, annotations), so that the whole
/// object stays within what etcd and every webhook on the way take.
pub const METADATA_RESERVE: u64 = 4 * 1024;
/// The largest archive Gantry sends.
pub const ARCHIVE_LIMIT: u64 = OBJECT_LIMIT - METADATA_RESERVE;
/// How many of the largest files a refusal names.
const LARGEST_NAMED: usize = 5;

/// Why a directory's code cannot go; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum CodeError {
    #[error("code directory {}: not a directory", dir.display())]
    NotADirectory { dir: PathBuf },
    #[error("cannot read {}: {source}; fix its permissions, or add it to .gantryignore", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} links to {}, outside the code directory: copy the file in, or add the link to .gantryignore", path.display(), target.display())]
    LinkOutside { path: PathBuf, target: PathBuf },
    #[error("{}: a name Gantry cannot carry (not UTF-8, or with a control character or a backslash): rename it, or add it to .gantryignore", path.display())]
    BadName { path: PathBuf },
    #[error("{} is neither a file nor a link (a socket, a pipe, a device): add it to .gantryignore", path.display())]
    NotAFile { path: PathBuf },
    #[error("{0}")]
    TooLarge(String),
    #[error("the code's archive: {0}")]
    Archive(String),
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A directory's code, ready to go: the archive and what the attempt records of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Packed {
    pub archive: Vec<u8>,
    pub record: CodeRecord,
    /// The directory as it was given (`./`), for what the launch says.
    pub given: PathBuf,
    pub git: git::Git,
}

impl Packed {
    /// What the launch says before anything is made:
    /// `code: 14 files, 38 KiB from ./ (git 3f2a1c9, 2 files changed)`.
    pub fn summary(&self) -> String {
        format!(
            "code: {}, {} from {} ({})",
            record::files_said(self.record.files),
            size_said(self.record.bytes),
            self.given.display(),
            self.git.said()
        )
    }
}

/// Reads `dir` and packs what goes, refusing what does not fit one ConfigMap.
pub fn pack(dir: &Path) -> Result<Packed, CodeError> {
    let files = files::collect(dir)?;
    let archive = archive::build(&files)?;
    let bytes: u64 = files.iter().map(files::CodeFile::size).sum();
    if archive.len() as u64 > ARCHIVE_LIMIT {
        return Err(CodeError::TooLarge(too_large(
            dir,
            &files,
            bytes,
            archive.len(),
        )));
    }
    let git = git::Git::of(dir);
    let shown = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    Ok(Packed {
        record: CodeRecord {
            digest: digest::of(&files),
            files: files.len() as u64,
            bytes,
            dir: shown.display().to_string(),
            commit: git.commit().map(str::to_string),
            dirty: git.dirty(),
        },
        archive,
        given: dir.to_path_buf(),
        git,
    })
}

/// The refusal of code too large: the total, the largest files, the fix.
fn too_large(dir: &Path, files: &[files::CodeFile], bytes: u64, archive: usize) -> String {
    let mut largest: Vec<&files::CodeFile> = files.iter().collect();
    largest.sort_by(|a, b| b.size().cmp(&a.size()).then(a.path.cmp(&b.path)));
    let named: Vec<String> = largest
        .iter()
        .take(LARGEST_NAMED)
        .map(|f| format!("  {:>9}  {}", size_said(f.size()), f.path))
        .collect();
    format!(
        "the code in {} is too large to go with an attempt: {} in {} (an archive of {}), and one ConfigMap holds {} (Kubernetes' 1 MiB, less {} for its metadata). The largest:\n{}\nAdd them to .gantryignore, or put data in a bucket and read it from there.",
        dir.display(),
        size_said(bytes),
        record::files_said(files.len() as u64),
        size_said(archive as u64),
        size_said(ARCHIVE_LIMIT),
        size_said(METADATA_RESERVE),
        named.join("\n")
    )
}

/// Writes what `archive` holds into `dir`, which must be new or empty; the files written.
pub fn write_out(archive: &[u8], dir: &Path) -> Result<Vec<files::CodeFile>, CodeError> {
    let files = archive::read(archive)?;
    if dir.exists() {
        let empty = std::fs::read_dir(dir)
            .map_err(|source| CodeError::Write {
                path: dir.to_path_buf(),
                source,
            })?
            .next()
            .is_none();
        if !empty {
            return Err(CodeError::Write {
                path: dir.to_path_buf(),
                source: std::io::Error::other(
                    "it is not empty: give a new directory, or an empty one",
                ),
            });
        }
    }
    std::fs::create_dir_all(dir).map_err(|source| CodeError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    archive::write_into(dir, &files)?;
    Ok(files)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn code_too_large_is_refused_naming_the_total_and_the_largest_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("train.py"), "print('hi')\n").unwrap();
        // Bytes no compression would shrink would not matter: nothing is compressed.
        std::fs::write(d.join("weights.bin"), vec![7u8; 2 * 1024 * 1024]).unwrap();
        std::fs::write(d.join("vocab.txt"), vec![b'a'; 1024 * 1024]).unwrap();
        let err = pack(d).unwrap_err().to_string();
        assert!(err.contains("3.0 MiB in 3 files"), "{err}");
        assert!(err.contains("one ConfigMap holds 1020 KiB"), "{err}");
        let weights = err.find("weights.bin").unwrap();
        let vocab = err.find("vocab.txt").unwrap();
        assert!(weights < vocab, "the largest first: {err}");
        assert!(err.contains("Add them to .gantryignore"), "{err}");
    }

    #[test]
    fn code_that_fits_is_packed_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("train.py"), "print('hi')\n").unwrap();
        std::fs::write(d.join(".gitignore"), "big.bin\n").unwrap();
        std::fs::write(d.join("big.bin"), vec![0u8; 5 * 1024 * 1024]).unwrap();
        let packed = pack(d).unwrap();
        assert_eq!(packed.record.files, 2);
        assert_eq!(packed.record.bytes, 12 + 8);
        assert!(packed.record.digest.starts_with("sha256:"));
        assert!(
            packed.summary().starts_with("code: 2 files, 20 B from "),
            "{}",
            packed.summary()
        );
    }

    #[test]
    fn code_is_written_back_only_into_a_new_or_empty_directory() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("train.py"), "x = 1\n").unwrap();
        let packed = pack(src.path()).unwrap();
        let out = tempfile::tempdir().unwrap();
        let target = out.path().join("new");
        let files = write_out(&packed.archive, &target).unwrap();
        assert_eq!(digest::of(&files), packed.record.digest);
        assert_eq!(std::fs::read(target.join("train.py")).unwrap(), b"x = 1\n");
        let err = write_out(&packed.archive, &target).unwrap_err();
        assert!(err.to_string().contains("not empty"), "{err}");
    }
}
