//! Config files through the real binary: every file in tests/valid_configs parses (`gantry
//! config` prints it, exit 0); every file in tests/invalid_configs fails with exit 2 and the
//! message its first line expects (`# expect: ...`), naming the file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::path::Path;

use common::fixtures;
use std::process::Command;

fn gantry_config(file: &Path) -> std::process::Output {
    fixtures::gantry_config(&["--config".as_ref(), file.as_os_str()])
}

fn files(dir: &str) -> Vec<std::path::PathBuf> {
    fixtures::fixture_files(&format!("tests/{dir}"), &["toml"])
}

#[test]
fn valid_configs_parse_and_print() {
    for file in files("valid_configs") {
        let out = gantry_config(&file);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(
            printed.contains("[cluster]") && printed.contains("[job]"),
            "{printed}"
        );
        // What `gantry config` prints is itself a valid config.
        let again = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(again.path(), printed.as_bytes()).unwrap();
        assert_eq!(
            gantry_config(again.path()).status.code(),
            Some(0),
            "{}",
            file.display()
        );
    }
}

#[test]
fn invalid_configs_fail_with_their_message() {
    for file in files("invalid_configs") {
        let out = gantry_config(&file);
        fixtures::assert_refused(&file, &out, &fixtures::expected_message(&file));
    }
}

#[test]
fn the_seed_example_is_what_gantry_does_by_default() {
    let home = tempfile::tempdir().unwrap();
    let defaults = Command::new(env!("CARGO_BIN_EXE_gantry"))
        .arg("config")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("c"))
        .output()
        .unwrap();
    let seed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/config/seed.toml"),
    )
    .unwrap();
    let seed_body: String = seed
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        String::from_utf8_lossy(&defaults.stdout).trim(),
        seed_body.trim()
    );
}
