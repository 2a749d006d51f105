//! What of a directory goes with an attempt: its files as git would see them. In a git
//! repository that is what git tracks or could (the `.gitignore` files from the repository's
//! root down, `.git/info/exclude`); outside one, the `.gitignore` files inside the directory as
//! if it were one. A `.gantryignore` (gitignore syntax) leaves out more; hidden files go; `.git`
//! never does. The `ignore` crate does the matching; by default it would also skip hidden
//! files and read `.ignore` files and the user's global excludes, which would make the same
//! directory pack differently on another machine, so those are off.
//!
//! Nothing is left out silently: a link that leads out of the directory, a file that cannot be
//! read, a name that cannot be carried or a thing that is neither file nor link is an error.

use std::path::{Component, Path, PathBuf};

use super::CodeError;

/// Where more is left out, in gitignore syntax.
pub const GANTRYIGNORE: &str = ".gantryignore";

/// One file that goes: its path inside the directory (`/`-separated), its permission bits, and
/// what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeFile {
    pub path: String,
    pub mode: u32,
    pub body: Body,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Bytes(Vec<u8>),
    /// A symbolic link, by its (relative) target.
    Link(String),
}

impl CodeFile {
    /// The bytes it counts for: a file's contents, a link's target.
    pub fn size(&self) -> u64 {
        match &self.body {
            Body::Bytes(b) => b.len() as u64,
            Body::Link(t) => t.len() as u64,
        }
    }
}

/// The files of `dir` that go, sorted by path.
pub fn collect(dir: &Path) -> Result<Vec<CodeFile>, CodeError> {
    let root = dir
        .canonicalize()
        .ok()
        .filter(|r| r.is_dir())
        .ok_or_else(|| CodeError::NotADirectory {
            dir: dir.to_path_buf(),
        })?;
    // git reads the ignore files from the repository's root down, and none above it.
    let in_repository = root.ancestors().any(|a| a.join(".git").exists());
    let mut walk = ignore::WalkBuilder::new(&root);
    walk.standard_filters(false)
        .git_ignore(true)
        .git_exclude(true)
        .parents(in_repository)
        .require_git(in_repository)
        .add_custom_ignore_filename(GANTRYIGNORE)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git");
    let mut files = Vec::new();
    for entry in walk.build() {
        let entry = entry.map_err(|e| walk_error(&root, e))?;
        let path = entry.path();
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            continue;
        }
        let relative = relative_name(&root, path)?;
        if kind.is_symlink() {
            files.push(link(&root, path, relative)?);
        } else if kind.is_file() {
            let bytes = std::fs::read(path).map_err(|source| CodeError::Unreadable {
                path: path.to_path_buf(),
                source,
            })?;
            files.push(CodeFile {
                path: relative,
                mode: permissions(path)?,
                body: Body::Bytes(bytes),
            });
        } else {
            return Err(CodeError::NotAFile {
                path: path.to_path_buf(),
            });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The walker's error: a directory or an ignore file that could not be read.
fn walk_error(root: &Path, e: ignore::Error) -> CodeError {
    let path = io_path(&e).unwrap_or_else(|| root.to_path_buf());
    match e.into_io_error() {
        Some(source) => CodeError::Unreadable { path, source },
        None => CodeError::Unreadable {
            path,
            source: std::io::Error::other("the directory could not be walked"),
        },
    }
}

fn io_path(e: &ignore::Error) -> Option<PathBuf> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            io_path(err)
        }
        _ => None,
    }
}

/// The path inside the directory as it is carried: UTF-8 without control characters, so that
/// every screen and record can say it and any machine can write it back.
fn relative_name(root: &Path, path: &Path) -> Result<String, CodeError> {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let bad = || CodeError::BadName {
        path: path.to_path_buf(),
    };
    let text = relative.to_str().ok_or_else(bad)?;
    if text.is_empty() || text.chars().any(char::is_control) || text.contains('\\') {
        return Err(bad());
    }
    Ok(text.to_string())
}

#[cfg(unix)]
fn permissions(path: &Path) -> Result<u32, CodeError> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(path).map_err(|source| CodeError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    // The permission bits alone: set-id and sticky bits never go.
    Ok(meta.permissions().mode() & 0o777)
}

#[cfg(not(unix))]
fn permissions(_: &Path) -> Result<u32, CodeError> {
    Ok(0o644)
}

/// A link that stays inside the directory, kept as a link; one that leads out (or names an
/// absolute path, which the container does not have) is refused.
fn link(root: &Path, path: &Path, relative: String) -> Result<CodeFile, CodeError> {
    let target = std::fs::read_link(path).map_err(|source| CodeError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let outside = || CodeError::LinkOutside {
        path: path.to_path_buf(),
        target: target.clone(),
    };
    // Where it leads, as written (a `..` too many leaves the directory) and as the file system
    // resolves it (through other links).
    let parent = Path::new(&relative).parent().unwrap_or(Path::new(""));
    if target.is_absolute() || !stays_inside(&parent.join(&target)) {
        return Err(outside());
    }
    if let Ok(resolved) = path.canonicalize()
        && !resolved.starts_with(root)
    {
        return Err(outside());
    }
    let text = target.to_str().ok_or_else(|| CodeError::BadName {
        path: path.to_path_buf(),
    })?;
    Ok(CodeFile {
        path: relative,
        mode: 0o777,
        body: Body::Link(text.to_string()),
    })
}

/// Whether a relative path, read component by component, never climbs above its start.
pub(super) fn stays_inside(path: &Path) -> bool {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::fs;

    fn paths(files: &[CodeFile]) -> Vec<&str> {
        files.iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn hidden_files_go_and_gitignored_ones_and_git_itself_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("train.py"), "print(1)\n").unwrap();
        fs::write(d.join(".env.example"), "A=1\n").unwrap();
        fs::write(d.join(".gitignore"), "*.bin\nout/\n").unwrap();
        fs::write(d.join("weights.bin"), "x").unwrap();
        fs::create_dir_all(d.join("out")).unwrap();
        fs::write(d.join("out/log.txt"), "x").unwrap();
        fs::create_dir_all(d.join("pkg/sub")).unwrap();
        fs::write(d.join("pkg/sub/model.py"), "m").unwrap();
        fs::write(d.join(".ignore"), "train.py\n").unwrap();
        fs::write(d.join(GANTRYIGNORE), "notes.md\n").unwrap();
        fs::write(d.join("notes.md"), "n").unwrap();
        fs::create_dir_all(d.join(".git")).unwrap();
        fs::write(d.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let files = collect(d).unwrap();
        assert_eq!(
            paths(&files),
            [
                ".env.example",
                ".gantryignore",
                ".gitignore",
                ".ignore",
                "pkg/sub/model.py",
                "train.py"
            ]
        );
    }

    #[test]
    fn in_a_repository_the_ignore_files_above_the_directory_count_up_to_its_root() {
        let repo = tempfile::tempdir().unwrap();
        let r = repo.path();
        fs::create_dir_all(r.join(".git/info")).unwrap();
        fs::write(r.join(".git/info/exclude"), "*.secret\n").unwrap();
        fs::write(r.join(".gitignore"), "*.ckpt\n").unwrap();
        fs::create_dir_all(r.join("trainer")).unwrap();
        fs::write(r.join("trainer/train.py"), "t").unwrap();
        fs::write(r.join("trainer/last.ckpt"), "c").unwrap();
        fs::write(r.join("trainer/key.secret"), "k").unwrap();
        let files = collect(&r.join("trainer")).unwrap();
        assert_eq!(paths(&files), ["train.py"]);
    }

    #[cfg(unix)]
    #[test]
    fn modes_are_kept_and_a_link_inside_stays_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("run.sh"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(d.join("run.sh"), fs::Permissions::from_mode(0o4755)).unwrap();
        fs::create_dir_all(d.join("conf")).unwrap();
        fs::write(d.join("conf/base.yaml"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink("conf/base.yaml", d.join("config.yaml")).unwrap();
        let files = collect(d).unwrap();
        let run = files.iter().find(|f| f.path == "run.sh").unwrap();
        assert_eq!(run.mode, 0o755, "set-id bits never go");
        let link = files.iter().find(|f| f.path == "config.yaml").unwrap();
        assert_eq!(link.body, Body::Link("conf/base.yaml".into()));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_directory_is_refused_however_it_is_written() {
        for target in ["/etc/passwd", "../outside.txt", "sub/../../outside.txt"] {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path().join("code");
            fs::create_dir_all(d.join("sub")).unwrap();
            fs::write(dir.path().join("outside.txt"), "secret").unwrap();
            std::os::unix::fs::symlink(target, d.join("leak")).unwrap();
            let err = collect(&d).unwrap_err();
            assert!(
                matches!(&err, CodeError::LinkOutside { .. }),
                "{target}: {err}"
            );
            assert!(err.to_string().contains(target), "{err}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_the_directory_above_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("code");
        fs::create_dir_all(&d).unwrap();
        std::os::unix::fs::symlink("..", d.join("up")).unwrap();
        let err = collect(&d).unwrap_err();
        assert!(matches!(err, CodeError::LinkOutside { .. }), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_file_that_cannot_be_read_and_a_name_that_cannot_be_carried_are_errors() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("a\nb.py"), "x").unwrap();
        assert!(matches!(collect(d).unwrap_err(), CodeError::BadName { .. }));
        fs::remove_file(d.join("a\nb.py")).unwrap();
        let latin1 = d.join(std::ffi::OsStr::from_bytes(b"caf\xe9.py"));
        fs::write(&latin1, "x").unwrap();
        assert!(matches!(collect(d).unwrap_err(), CodeError::BadName { .. }));
        fs::remove_file(latin1).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::write(d.join("locked.py"), "x").unwrap();
        fs::set_permissions(d.join("locked.py"), fs::Permissions::from_mode(0o000)).unwrap();
        // Root reads any file: there the refusal cannot be seen.
        if fs::read(d.join("locked.py")).is_err() {
            let err = collect(d).unwrap_err();
            assert!(matches!(err, CodeError::Unreadable { .. }), "{err}");
            assert!(err.to_string().contains("locked.py"), "{err}");
        }
    }

    #[test]
    fn a_missing_directory_is_said() {
        let err = collect(Path::new("/no/such/dir/anywhere")).unwrap_err();
        assert!(matches!(err, CodeError::NotADirectory { .. }), "{err}");
    }

    #[test]
    fn a_path_that_climbs_out_is_seen() {
        assert!(stays_inside(Path::new("a/../b")));
        assert!(!stays_inside(Path::new("a/../../b")));
        assert!(!stays_inside(Path::new("/etc")));
        assert!(stays_inside(Path::new("./x")));
    }
}
