//! What an attempt records of its code, in an annotation on its Job (`gantry.dev/code`), so
//! that anyone reading the attempt later — `gantry status`, the Job pane, another machine's
//! Gantry — knows what ran: the digest, how many files and bytes, the directory it came from,
//! and, in a git repository, the commit and whether the tree had changes.

use serde::{Deserialize, Serialize};

use super::digest;

/// The annotation on an attempt's Job that holds its [`CodeRecord`] (JSON).
pub const ANNOTATION: &str = "gantry.dev/code";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeRecord {
    /// `sha256:…` over paths, modes and contents (`code::digest`).
    pub digest: String,
    pub files: u64,
    /// The files' bytes (not the archive's).
    pub bytes: u64,
    /// The directory, as the machine that launched it named it.
    pub dir: String,
    /// The commit (None outside a repository, or without git).
    pub commit: Option<String>,
    /// Whether the tree had changes beside its commit (None when git could not say).
    pub dirty: Option<bool>,
}

impl CodeRecord {
    pub fn to_annotation(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The record an annotation holds; None for text that is not one (a hand-edited Job).
    pub fn parse(text: &str) -> Option<CodeRecord> {
        serde_json::from_str(text).ok()
    }

    /// One line for a screen: `3f2a1c9e0b1d · 14 files · 38 KiB · git 3f2a1c9 (changed)`.
    pub fn said(&self) -> String {
        let mut text = format!(
            "{} · {} · {}",
            digest::short(&self.digest),
            files_said(self.files),
            size_said(self.bytes)
        );
        if let Some(commit) = &self.commit {
            text.push_str(&format!(" · git {}", super::git::short(commit)));
            if self.dirty == Some(true) {
                text.push_str(" (changed)");
            }
        }
        text
    }
}

pub fn files_said(n: u64) -> String {
    match n {
        1 => "1 file".into(),
        n => format!("{n} files"),
    }
}

/// A size as people read it, in binary units (`512 B`, `38 KiB`, `2.9 MiB`).
pub fn size_said(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = KIB * 1024;
    match bytes {
        b if b < KIB => format!("{b} B"),
        b if b < 10 * KIB => format!("{:.1} KiB", b as f64 / KIB as f64),
        b if b < MIB => format!("{} KiB", (b + KIB / 2) / KIB),
        b => format!("{:.1} MiB", b as f64 / MIB as f64),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_record_reads_back_and_says_itself_in_one_line() {
        let record = CodeRecord {
            digest: format!("sha256:{}", "ab".repeat(32)),
            files: 14,
            bytes: 38 * 1024,
            dir: "/home/a/proj".into(),
            commit: Some("3f2a1c9e".repeat(5)),
            dirty: Some(true),
        };
        let text = record.to_annotation();
        assert!(text.contains("\"dirty\":true"), "{text}");
        assert_eq!(CodeRecord::parse(&text), Some(record.clone()));
        assert_eq!(
            record.said(),
            "abababababab · 14 files · 38 KiB · git 3f2a1c9 (changed)"
        );
        assert_eq!(CodeRecord::parse("not json"), None);
    }

    #[test]
    fn sizes_are_said_in_binary_units() {
        assert_eq!(size_said(512), "512 B");
        assert_eq!(size_said(1536), "1.5 KiB");
        assert_eq!(size_said(38 * 1024 + 100), "38 KiB");
        assert_eq!(size_said(3 * 1024 * 1024), "3.0 MiB");
    }
}
