//! The logs the tailer saved, found on disk alone: under `<state>/logs/<cluster>/` one
//! directory per attempt, named as the attempt's Job (`<job>`, `<job>-2`, …), holding one
//! `<pod>.log` per pod and the tailer's hidden `.<pod>.cursor` files beside them.

use std::io;
use std::path::{Path, PathBuf};

use crate::k8s::labels::attempt_name;
use crate::paths::path_component;

/// One attempt's saved logs.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedAttempt {
    /// As the TUI numbers it: `#1` is `<job>`.
    pub number: u32,
    /// Its Job's name.
    pub name: String,
    pub dir: PathBuf,
    /// `(pod, file)`, by pod name.
    pub pods: Vec<(String, PathBuf)>,
}

/// The saved logs of attempt `number` of `job` under `cluster_dir`, when there are any.
pub fn attempt(cluster_dir: &Path, job: &str, number: u32) -> io::Result<Option<SavedAttempt>> {
    let name = attempt_name(job, number);
    let dir = cluster_dir.join(path_component(&name));
    match pod_logs(&dir) {
        Ok(pods) if !pods.is_empty() => Ok(Some(SavedAttempt {
            number,
            name,
            dir,
            pods,
        })),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Every attempt of `job` with at least one saved pod log under `cluster_dir`, oldest first.
/// A directory that is not there holds none.
pub fn attempts(cluster_dir: &Path, job: &str) -> io::Result<Vec<SavedAttempt>> {
    let entries = match std::fs::read_dir(cluster_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry?;
        let Some(number) = entry.file_name().to_str().and_then(|d| number_of(d, job)) else {
            continue;
        };
        let dir = entry.path();
        if !dir.is_dir() {
            continue;
        }
        let pods = pod_logs(&dir)?;
        if !pods.is_empty() {
            found.push(SavedAttempt {
                number,
                name: attempt_name(job, number),
                dir,
                pods,
            });
        }
    }
    found.sort_by_key(|a| a.number);
    Ok(found)
}

/// The attempt number a directory under the cluster's stands for, if it is one of `job`'s:
/// read back through the one naming rule, so `<job>-02` or `<job>-1` are none.
fn number_of(dir_name: &str, job: &str) -> Option<u32> {
    let base = path_component(job);
    let number = if dir_name == base {
        1
    } else {
        dir_name
            .strip_prefix(&base)?
            .strip_prefix('-')?
            .parse()
            .ok()?
    };
    (path_component(&attempt_name(job, number)) == dir_name).then_some(number)
}

/// The `<pod>.log` files of an attempt's directory, by pod name; the hidden cursor files and
/// anything else beside them are not logs.
fn pod_logs(dir: &Path) -> io::Result<Vec<(String, PathBuf)>> {
    let mut pods = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(pod) = name
            .to_str()
            .filter(|n| !n.starts_with('.'))
            .and_then(|n| n.strip_suffix(".log"))
            .filter(|p| !p.is_empty())
        else {
            continue;
        };
        let path = entry.path();
        if path.is_file() {
            pods.push((pod.to_string(), path));
        }
    }
    pods.sort();
    Ok(pods)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn attempt_directories_are_read_back_by_the_naming_rule() {
        assert_eq!(number_of("train", "train"), Some(1));
        assert_eq!(number_of("train-2", "train"), Some(2));
        assert_eq!(number_of("train-13", "train"), Some(13));
        for other in [
            "train-1", "train-02", "train-+2", "train-", "trainer", "other-2",
        ] {
            assert_eq!(number_of(other, "train"), None, "{other}");
        }
    }

    #[test]
    fn only_pod_logs_count_and_empty_attempts_are_skipped() {
        let root = tempfile::tempdir().unwrap();
        let first = root.path().join("train");
        std::fs::create_dir_all(&first).unwrap();
        std::fs::write(first.join("train-abc.log"), "loss=1\n").unwrap();
        std::fs::write(first.join(".train-abc.cursor"), "1 2 0 7\n").unwrap();
        std::fs::write(first.join(".train-abc.cursor.tmp"), "").unwrap();
        std::fs::write(first.join("notes.txt"), "").unwrap();
        std::fs::create_dir_all(root.path().join("train-3")).unwrap();
        std::fs::create_dir_all(root.path().join("unrelated-2")).unwrap();

        let found = attempts(root.path(), "train").unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].number, 1);
        assert_eq!(found[0].name, "train");
        assert_eq!(
            found[0].pods,
            [("train-abc".to_string(), first.join("train-abc.log"))]
        );
        assert!(
            attempts(&root.path().join("none"), "train")
                .unwrap()
                .is_empty()
        );
    }
}
