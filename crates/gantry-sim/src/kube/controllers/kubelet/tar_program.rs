//! The one program the simulated kubelet carries out itself in an init container: `tar`
//! extracting an archive (`tar -x -f FILE -C DIR`, and the forms GNU tar and busybox take for it),
//! as the image's own tar would. What it reads and writes are the pod's volumes (`init`); here,
//! the command line as tar reads it, and the archive's entries.

use std::io::Read;
use std::path::{Component, Path};

/// `tar` asked to extract `archive` into `into` (None: the working directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extract {
    pub archive: String,
    pub into: Option<String>,
}

/// One entry of an archive, its path relative to where it is extracted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Dir {
        path: String,
        mode: u32,
    },
    File {
        path: String,
        mode: u32,
        bytes: Vec<u8>,
    },
    Link {
        path: String,
        target: String,
    },
}

impl Entry {
    pub fn path(&self) -> &str {
        match self {
            Entry::Dir { path, .. } | Entry::File { path, .. } | Entry::Link { path, .. } => path,
        }
    }
}

/// What `command` asks of tar: None when it is not tar extracting an archive (another program
/// the simulated kubelet does not run); Err(tar's own words) when tar would refuse it.
pub fn extract_of(command: &[String]) -> Option<Result<Extract, String>> {
    let (program, args) = command.split_first()?;
    if Path::new(program).file_name()? != "tar" {
        return None;
    }
    let mut extract = false;
    let mut archive = None;
    let mut into = None;
    let mut args = args.iter().peekable();
    let mut first = true;
    while let Some(arg) = args.next() {
        // Old style: a first word of letters without a dash (`tar xf FILE`).
        let cluster = match arg.strip_prefix('-') {
            Some(rest) if !rest.starts_with('-') && !rest.is_empty() => Some(rest),
            None if first && !arg.is_empty() => Some(arg.as_str()),
            _ => None,
        };
        first = false;
        if let Some(letters) = cluster {
            for (at, c) in letters.char_indices() {
                match c {
                    'x' => extract = true,
                    'v' | 'o' | 'p' | 'm' => {}
                    // Another operation: not an extraction, so none of the kubelet's.
                    'c' | 't' | 'r' | 'u' | 'A' | 'd' => return None,
                    'z' | 'j' | 'J' => {
                        return Some(Err(format!(
                            "tar: -{c}: the simulated kubelet extracts uncompressed archives only"
                        )));
                    }
                    'f' | 'C' => {
                        let rest = &letters[at + c.len_utf8()..];
                        let value = if rest.is_empty() {
                            args.next().cloned()
                        } else {
                            Some(rest.to_string())
                        };
                        let Some(value) = value else {
                            return Some(Err(format!("tar: option requires an argument -- '{c}'")));
                        };
                        if c == 'f' {
                            archive = Some(value);
                        } else {
                            into = Some(value);
                        }
                        break;
                    }
                    other => return Some(Err(format!("tar: invalid option -- '{other}'"))),
                }
            }
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (arg.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| args.next().cloned());
        match name {
            "--extract" | "--get" => extract = true,
            "--verbose" | "--no-same-owner" | "--preserve-permissions" | "--touch" => {}
            "--create" | "--list" | "--append" | "--update" | "--diff" => return None,
            "--file" => archive = value(),
            "--directory" => into = value(),
            _ if arg.starts_with('-') => {
                return Some(Err(format!("tar: unrecognized option '{arg}'")));
            }
            _ => {
                return Some(Err(format!(
                    "tar: {arg}: Not found in archive (the simulated kubelet extracts whole archives)"
                )));
            }
        }
    }
    if !extract {
        return None;
    }
    Some(match archive {
        Some(archive) => Ok(Extract { archive, into }),
        None => {
            Err("tar: Refusing to read archive contents from terminal (missing -f option?)".into())
        }
    })
}

/// The entries of an archive, refused as tar refuses them: not an archive, or a member that
/// would land outside the directory.
pub fn entries(archive: &[u8]) -> Result<Vec<Entry>, String> {
    let not_tar = |_| "tar: This does not look like a tar archive".to_string();
    let mut tar = tar::Archive::new(archive);
    let mut out = Vec::new();
    for entry in tar.entries().map_err(not_tar)? {
        let mut entry = entry.map_err(not_tar)?;
        let path = entry
            .path()
            .map_err(not_tar)?
            .to_string_lossy()
            .trim_end_matches('/')
            .to_string();
        if path.is_empty() || !stays_inside(Path::new(&path)) {
            return Err(format!(
                "tar: {path}: Member name contains '..' or is absolute"
            ));
        }
        let mode = entry.header().mode().unwrap_or(0o644) & 0o7777;
        match entry.header().entry_type() {
            tar::EntryType::Directory => out.push(Entry::Dir { path, mode }),
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .ok()
                    .flatten()
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.push(Entry::Link { path, target });
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let mut bytes = Vec::new();
                entry
                    .read_to_end(&mut bytes)
                    .map_err(|e| format!("tar: {path}: {e}"))?;
                out.push(Entry::File { path, mode, bytes });
            }
            // Devices, FIFOs, hard links: nothing a code archive holds.
            _ => {}
        }
    }
    Ok(out)
}

fn stays_inside(path: &Path) -> bool {
    let mut depth = 0usize;
    for c in path.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

/// Writes `entries` under `dir` as tar extracts them: directories made, files with their bytes
/// and mode, links as links; never through a link out of `dir`.
pub fn write_into(dir: &Path, entries: &[Entry]) -> Result<(), String> {
    for entry in entries {
        let target = dir.join(entry.path());
        let failed = |e: std::io::Error| format!("tar: {}: Cannot open: {e}", entry.path());
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(failed)?;
            let real = parent.canonicalize().map_err(failed)?;
            let root = dir.canonicalize().map_err(failed)?;
            if !real.starts_with(&root) {
                return Err(format!(
                    "tar: {}: Cannot open: the path leads out of the directory through a link",
                    entry.path()
                ));
            }
        }
        match entry {
            Entry::Dir { mode, .. } => {
                std::fs::create_dir_all(&target).map_err(failed)?;
                set_mode(&target, *mode).map_err(failed)?;
            }
            Entry::File { mode, bytes, .. } => {
                std::fs::write(&target, bytes).map_err(failed)?;
                set_mode(&target, *mode).map_err(failed)?;
            }
            Entry::Link { target: to, .. } => link(to, &target).map_err(failed)?,
        }
    }
    Ok(())
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o777))
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
fn link(_: &str, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other("links are made on Unix only"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_forms_of_an_extraction_are_read_as_tar_reads_them() {
        let want = Extract {
            archive: "/a/code.tar".into(),
            into: Some("/w".into()),
        };
        for line in [
            "tar -x -f /a/code.tar -C /w",
            "tar -xvf /a/code.tar -C /w",
            "tar xf /a/code.tar -C /w",
            "/bin/tar --extract --file=/a/code.tar --directory /w",
            "tar -xf/a/code.tar -C/w --no-same-owner",
        ] {
            assert_eq!(extract_of(&words(line)), Some(Ok(want.clone())), "{line}");
        }
        assert_eq!(
            extract_of(&words("tar -xf /a/code.tar")),
            Some(Ok(Extract {
                archive: "/a/code.tar".into(),
                into: None
            }))
        );
        assert_eq!(extract_of(&words("sh -c true")), None);
        assert_eq!(extract_of(&words("tar -cf out.tar .")), None);
        let refused = extract_of(&words("tar -xz -f a.tgz")).unwrap().unwrap_err();
        assert!(refused.contains("uncompressed archives only"), "{refused}");
        let refused = extract_of(&words("tar -xq -f a.tar")).unwrap().unwrap_err();
        assert!(refused.contains("invalid option -- 'q'"), "{refused}");
        assert!(extract_of(&words("tar -x")).unwrap().is_err());
    }

    fn archive(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, bytes) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_size(bytes.len() as u64);
            h.set_mode(0o755);
            builder.append_data(&mut h, path, *bytes).unwrap();
        }
        builder.into_inner().unwrap()
    }

    #[test]
    fn entries_are_read_and_written_with_their_modes() {
        let entries =
            entries(&archive(&[("train.py", b"print(1)\n"), ("pkg/m.py", b"m")])).unwrap();
        assert_eq!(entries.len(), 2);
        let dir = tempfile::tempdir().unwrap();
        write_into(dir.path(), &entries).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("train.py")).unwrap(),
            b"print(1)\n"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("pkg/m.py"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o755);
        }
        assert_eq!(
            super::entries(b"not a tar at all, not 512 bytes").unwrap_err(),
            "tar: This does not look like a tar archive"
        );
    }
}
