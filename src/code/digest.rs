//! The name of an attempt's code: a SHA-256 over each file's path, mode and contents (a link's
//! target), in path order, so that the same files give the same digest on any machine, whatever
//! their times or owners, and two attempts that ran the same code can be told apart from two
//! that did not.

use sha2::{Digest, Sha256};

use super::files::{Body, CodeFile};

/// `sha256:` and 64 hex digits.
pub fn of(files: &[CodeFile]) -> String {
    let mut sorted: Vec<&CodeFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut hash = Sha256::new();
    for file in sorted {
        let (kind, bytes) = match &file.body {
            Body::Bytes(b) => ("file", b.as_slice()),
            Body::Link(t) => ("link", t.as_bytes()),
        };
        // Each field ends in a NUL or is length-prefixed, so no two lists hash alike.
        hash.update(kind.as_bytes());
        hash.update([0]);
        hash.update(file.path.as_bytes());
        hash.update([0]);
        hash.update(format!("{:o}", file.mode).as_bytes());
        hash.update([0]);
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    }
    let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The digest as screens show it: its first 12 hex digits.
pub fn short(digest: &str) -> &str {
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    hex.get(..12).unwrap_or(hex)
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

    #[test]
    fn the_digest_changes_with_a_path_a_mode_or_a_byte_and_not_with_order() {
        let a = vec![file("a.py", 0o644, b"x"), file("b.py", 0o644, b"y")];
        let base = of(&a);
        assert!(base.starts_with("sha256:") && base.len() == 71, "{base}");
        let reversed: Vec<CodeFile> = a.iter().rev().cloned().collect();
        assert_eq!(of(&reversed), base);
        assert_ne!(of(&[file("a.py", 0o755, b"x"), a[1].clone()]), base);
        assert_ne!(of(&[file("a.py", 0o644, b"z"), a[1].clone()]), base);
        assert_ne!(of(&[file("c.py", 0o644, b"x"), a[1].clone()]), base);
        // Bytes moved between the path and the contents are still another list.
        assert_ne!(
            of(&[file("ab", 0o644, b"c")]),
            of(&[file("a", 0o644, b"bc")])
        );
        assert_eq!(short(&base).len(), 12);
    }
}
