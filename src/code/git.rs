//! Which commit the code came from and whether the tree had changes, read with the `git`
//! command where there is one (no git library: the command is what the person uses, and it
//! knows every repository layout). Without git, or outside a repository, both are left out and
//! the launch says so.

use std::path::Path;
use std::process::{Command, Stdio};

/// What git says of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Git {
    /// In a repository: its HEAD (None before the first commit) and how many paths under the
    /// directory differ from it, untracked ones included.
    Repository {
        commit: Option<String>,
        changed: usize,
    },
    NotARepository,
    /// No `git` command on this machine.
    Missing,
}

impl Git {
    pub fn of(dir: &Path) -> Git {
        let inside = git(dir, &["rev-parse", "--is-inside-work-tree"]);
        match inside {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Git::Missing,
            Ok(Some(text)) if text.trim() == "true" => {}
            _ => return Git::NotARepository,
        }
        let commit = git(dir, &["rev-parse", "--verify", "--quiet", "HEAD"])
            .ok()
            .flatten()
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty());
        let changed = git(
            dir,
            &["status", "--porcelain", "--untracked-files=all", "--", "."],
        )
        .ok()
        .flatten()
        .map_or(0, |text| text.lines().filter(|l| !l.is_empty()).count());
        Git::Repository { commit, changed }
    }

    pub fn commit(&self) -> Option<&str> {
        match self {
            Git::Repository { commit, .. } => commit.as_deref(),
            _ => None,
        }
    }

    /// Whether the tree differs from its commit; None when git could not say.
    pub fn dirty(&self) -> Option<bool> {
        match self {
            Git::Repository { changed, .. } => Some(*changed > 0),
            _ => None,
        }
    }

    /// As the launch's summary says it: `git 3f2a1c9, 2 files changed`.
    pub fn said(&self) -> String {
        match self {
            Git::Repository {
                commit: Some(c),
                changed: 0,
            } => format!("git {}", short(c)),
            Git::Repository {
                commit: Some(c),
                changed: 1,
            } => format!("git {}, 1 file changed", short(c)),
            Git::Repository {
                commit: Some(c),
                changed,
            } => format!("git {}, {changed} files changed", short(c)),
            Git::Repository { commit: None, .. } => "git: no commit yet".into(),
            Git::NotARepository => "not a git repository: no commit recorded".into(),
            Git::Missing => "git not found: no commit recorded".into(),
        }
    }
}

/// A commit as people read one: its first 7 hex digits.
pub fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

/// git's output, None when it said no; Err when it could not be run.
fn git(dir: &Path, args: &[&str]) -> std::io::Result<Option<String>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        // A status in passing never takes the index's lock from a person's own git.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn a_commit_and_the_changes_under_the_directory_are_read() {
        if Command::new("git").arg("--version").output().is_err() {
            eprintln!("skipping: git is not installed");
            return;
        }
        let repo = tempfile::tempdir().unwrap();
        let r = repo.path();
        assert_eq!(Git::of(r), Git::NotARepository);
        run(r, &["init", "-q"]);
        std::fs::create_dir(r.join("code")).unwrap();
        std::fs::write(r.join("code/train.py"), "1").unwrap();
        std::fs::write(r.join("elsewhere.txt"), "1").unwrap();
        assert_eq!(
            Git::of(&r.join("code")),
            Git::Repository {
                commit: None,
                changed: 1
            }
        );
        run(r, &["add", "-A"]);
        run(r, &["commit", "-q", "-m", "first"]);
        let clean = Git::of(&r.join("code"));
        assert_eq!(clean.dirty(), Some(false));
        let commit = clean.commit().unwrap().to_string();
        assert_eq!(commit.len(), 40);
        assert_eq!(clean.said(), format!("git {}", &commit[..7]));
        std::fs::write(r.join("code/train.py"), "2").unwrap();
        std::fs::write(r.join("code/new.py"), "n").unwrap();
        std::fs::write(r.join("elsewhere.txt"), "2").unwrap();
        let dirty = Git::of(&r.join("code"));
        assert_eq!(
            dirty.said(),
            format!("git {}, 2 files changed", &commit[..7])
        );
        assert_eq!(dirty.dirty(), Some(true));
    }
}
