//! Fixture files run through the real binary: `gantry ... config` in a HOME of its own, the
//! fixtures of a folder, and the checks every refused file must pass.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A path in the repository (this crate lives in its `tests/support`).
pub fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative)
}

/// `gantry ARGS config` in a HOME of its own (no config file but the one given).
pub fn gantry_config(args: &[&OsStr]) -> Output {
    let home = tempfile::tempdir().unwrap();
    Command::new(crate::gantry_bin())
        .args(args)
        .arg("config")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .output()
        .unwrap()
}

/// The files of a repository folder with one of these extensions, sorted; never none.
pub fn fixture_files(dir: &str, extensions: &[&str]) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(repo_path(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| extensions.iter().any(|x| e == *x))
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {dir}");
    files
}

/// What a refused fixture's first line, `# expect: ...`, says its error contains.
pub fn expected_message(file: &Path) -> String {
    let content = std::fs::read_to_string(file).unwrap();
    content
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# expect: "))
        .unwrap_or_else(|| panic!("{} has no '# expect:' line", file.display()))
        .to_string()
}

/// The binary refused `file`: exit 2, a message containing `expect` that names the file, no
/// panic.
pub fn assert_refused(file: &Path, out: &Output, expect: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}: {stderr}", file.display());
    assert!(
        stderr.contains(expect),
        "{}: expected {expect:?} in {stderr}",
        file.display()
    );
    assert!(
        stderr.contains(&file.display().to_string()),
        "the error names the file: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}
