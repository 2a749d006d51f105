//! The one archive an attempt's code travels in: a tar (POSIX tar as GNU tar, busybox tar and
//! Python's `tarfile` read it), because a ConfigMap key cannot hold a `/` and a path's
//! directories and a file's mode must survive. Not compressed, so that what counts against
//! Kubernetes' limit is what the files weigh (plus 512 bytes of header each), said before
//! anything is made. The same files always make the same bytes: every entry is owned by root,
//! stamped with one fixed time, directories first.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

use super::CodeError;
use super::files::{Body, CodeFile, stays_inside};

/// The directories the files need, each with the mode git would give it.
const DIR_MODE: u32 = 0o755;

/// The archive of `files` (sorted by path, as `files::collect` gives them).
pub fn build(files: &[CodeFile]) -> Result<Vec<u8>, CodeError> {
    let mut builder = tar::Builder::new(Vec::new());
    let mut dirs = BTreeSet::new();
    for file in files {
        let mut parent = Path::new(&file.path).parent();
        while let Some(dir) = parent.filter(|d| !d.as_os_str().is_empty()) {
            dirs.insert(dir.to_path_buf());
            parent = dir.parent();
        }
    }
    let archive_error = |e: std::io::Error| CodeError::Archive(e.to_string());
    for dir in &dirs {
        let mut header = header(tar::EntryType::Directory, DIR_MODE, 0);
        builder
            .append_data(&mut header, dir, std::io::empty())
            .map_err(archive_error)?;
    }
    for file in files {
        match &file.body {
            Body::Bytes(bytes) => {
                let mut header = header(tar::EntryType::Regular, file.mode, bytes.len() as u64);
                builder
                    .append_data(&mut header, &file.path, bytes.as_slice())
                    .map_err(archive_error)?;
            }
            Body::Link(target) => {
                let mut header = header(tar::EntryType::Symlink, file.mode, 0);
                builder
                    .append_link(&mut header, &file.path, target)
                    .map_err(archive_error)?;
            }
        }
    }
    builder.into_inner().map_err(archive_error)
}

fn header(kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_mode(mode);
    header.set_size(size);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(tar::DETERMINISTIC_TIMESTAMP);
    header
}

/// The files an archive holds, sorted by path; refused when an entry would land outside the
/// directory it is written to, or is neither a file, a link nor a directory.
pub fn read(archive: &[u8]) -> Result<Vec<CodeFile>, CodeError> {
    let bad = |why: String| CodeError::Archive(why);
    let mut tar = tar::Archive::new(archive);
    let mut files = Vec::new();
    for entry in tar.entries().map_err(|e| bad(e.to_string()))? {
        let mut entry = entry.map_err(|e| bad(e.to_string()))?;
        let path = entry
            .path()
            .map_err(|e| bad(e.to_string()))?
            .to_str()
            .map(|p| p.trim_end_matches('/').to_string())
            .ok_or_else(|| bad("an entry's name is not UTF-8".into()))?;
        if path.is_empty() || !stays_inside(Path::new(&path)) {
            return Err(bad(format!(
                "entry {path:?} would land outside the directory"
            )));
        }
        let mode = entry.header().mode().map_err(|e| bad(e.to_string()))? & 0o777;
        let body = match entry.header().entry_type() {
            tar::EntryType::Directory => continue,
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let mut bytes = Vec::new();
                entry
                    .read_to_end(&mut bytes)
                    .map_err(|e| bad(e.to_string()))?;
                Body::Bytes(bytes)
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(|e| bad(e.to_string()))?
                    .and_then(|t| t.to_str().map(str::to_string))
                    .ok_or_else(|| bad(format!("link {path:?} has no target")))?;
                let parent = Path::new(&path).parent().unwrap_or(Path::new(""));
                if Path::new(&target).is_absolute() || !stays_inside(&parent.join(&target)) {
                    return Err(bad(format!(
                        "link {path:?} leads out of the directory (to {target})"
                    )));
                }
                Body::Link(target)
            }
            other => return Err(bad(format!("entry {path:?} is a {other:?}, not a file"))),
        };
        files.push(CodeFile { path, mode, body });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// Writes `files` into `dir` (which exists): each file with its bytes and mode, each link as a
/// link, the directories they need.
pub fn write_into(dir: &Path, files: &[CodeFile]) -> Result<(), CodeError> {
    for file in files {
        let target = dir.join(&file.path);
        let failed = |source: std::io::Error| CodeError::Write {
            path: target.clone(),
            source,
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(failed)?;
        }
        match &file.body {
            Body::Bytes(bytes) => {
                std::fs::write(&target, bytes).map_err(failed)?;
                set_mode(&target, file.mode).map_err(failed)?;
            }
            Body::Link(to) => link(to, &target).map_err(failed)?,
        }
    }
    Ok(())
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn link(to: &str, at: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(to, at)
}

#[cfg(not(unix))]
fn link(_: &str, at: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other(format!(
        "{}: links are written on Unix only",
        at.display()
    )))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn file(path: &str, mode: u32, bytes: &[u8]) -> CodeFile {
        CodeFile {
            path: path.into(),
            mode,
            body: Body::Bytes(bytes.to_vec()),
        }
    }

    fn sample() -> Vec<CodeFile> {
        let long = format!("{}/deep.py", "d".repeat(120));
        vec![
            file(&long, 0o644, b"deep\n"),
            file("pkg/model.py", 0o644, b"class M: pass\n"),
            file("run.sh", 0o755, b"#!/bin/sh\necho hi\n"),
            CodeFile {
                path: "train-link.py".into(),
                mode: 0o777,
                body: Body::Link("pkg/model.py".into()),
            },
        ]
    }

    #[test]
    fn what_is_packed_reads_back_the_same_and_the_same_files_make_the_same_bytes() {
        let mut files = sample();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let archive = build(&files).unwrap();
        assert_eq!(read(&archive).unwrap(), files);
        assert_eq!(build(&files).unwrap(), archive);
    }

    #[cfg(unix)]
    #[test]
    fn gnu_tar_unpacks_it_as_the_container_does() {
        use std::os::unix::fs::PermissionsExt;
        let Ok(tar) = std::process::Command::new("tar").arg("--version").output() else {
            eprintln!("skipping: no tar on this machine");
            return;
        };
        assert!(tar.status.success());
        let mut files = sample();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("code.tar");
        std::fs::write(&archive, build(&files).unwrap()).unwrap();
        let out = dir.path().join("workspace");
        std::fs::create_dir(&out).unwrap();
        let status = std::process::Command::new("tar")
            .arg("-x")
            .arg("-f")
            .arg(&archive)
            .arg("-C")
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        let run = out.join("run.sh");
        assert_eq!(std::fs::read(&run).unwrap(), b"#!/bin/sh\necho hi\n");
        assert_eq!(
            std::fs::metadata(&run).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert_eq!(
            std::fs::read_link(out.join("train-link.py")).unwrap(),
            Path::new("pkg/model.py")
        );
        let long = out.join("d".repeat(120)).join("deep.py");
        assert_eq!(std::fs::read(long).unwrap(), b"deep\n");
    }

    #[test]
    fn an_archive_that_would_write_outside_is_refused() {
        let mut builder = tar::Builder::new(Vec::new());
        let mut h = header(tar::EntryType::Symlink, 0o777, 0);
        builder.append_link(&mut h, "escape", "../../etc").unwrap();
        let archive = builder.into_inner().unwrap();
        let err = read(&archive).unwrap_err();
        assert!(err.to_string().contains("leads out"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn files_are_written_back_with_their_modes_and_links() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let files = sample();
        write_into(dir.path(), &files).unwrap();
        let run = dir.path().join("run.sh");
        assert_eq!(
            std::fs::metadata(&run).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert_eq!(
            std::fs::read_link(dir.path().join("train-link.py")).unwrap(),
            Path::new("pkg/model.py")
        );
    }
}
