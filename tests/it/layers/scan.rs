//! Reads Gantry's source as text and finds what each file imports of the crate: every
//! `crate::…` path (in `use` trees and inline), every `super::…` and `self::…` path, and every
//! path that starts with a child module the file declares. Comments, strings and test code
//! (`#[cfg(test)]` items, `*_tests.rs`, `fixtures.rs`) are left out: what a module's tests
//! borrow is not what the module depends on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A source file: its module path (`engine::owner`), and the module paths it names.
#[derive(Debug)]
pub struct File {
    pub module: Vec<String>,
    pub paths: BTreeSet<Vec<String>>,
}

/// Every non-test source file under `src`, by module path.
pub fn read_tree(src: &Path) -> BTreeMap<Vec<String>, File> {
    let mut files = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") || is_test_file(&path) {
                continue;
            }
            let Some(module) = module_of(src, &path) else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let code = without_tests(&strip_comments_and_strings(&text));
            let paths = paths_named(&code, &module);
            files.insert(module.clone(), File { module, paths });
        }
    }
    files
}

fn is_test_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    name.ends_with("tests.rs") || name == "fixtures.rs" || name == "test_support.rs"
}

/// `src/engine/owner.rs` → `["engine", "owner"]`; `src/engine/mod.rs` → `["engine"]`;
/// `src/lib.rs` → `[]`. `main.rs` is the binary, not a module of the library.
fn module_of(src: &Path, path: &Path) -> Option<Vec<String>> {
    let relative = path.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    match last.as_str() {
        "lib.rs" if parts.is_empty() => {}
        "main.rs" if parts.is_empty() => return None,
        "mod.rs" => {}
        other => parts.push(other.trim_end_matches(".rs").to_string()),
    }
    Some(parts)
}

/// The text with comments, string and char literals blanked (lengths kept, newlines kept).
pub fn strip_comments_and_strings(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, b: u8| out.push(if b == b'\n' { b'\n' } else { b' ' });
    while i < bytes.len() {
        let b = bytes[i];
        let next = bytes.get(i + 1).copied();
        if b == b'/' && next == Some(b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if b == b'/' && next == Some(b'*') {
            let mut depth = 0;
            while i < bytes.len() {
                if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, bytes[i]);
                    i += 1;
                }
            }
        } else if b == b'r'
            && (next == Some(b'"') || next == Some(b'#'))
            && !bytes
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_ascii_alphanumeric() || *p == b'_')
        {
            // A raw string: r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while bytes.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if bytes.get(j) != Some(&b'"') {
                out.push(b);
                i += 1;
                continue;
            }
            let mut closing = vec![b'"'];
            closing.extend(std::iter::repeat_n(b'#', hashes));
            let end = find(bytes, j + 1, &closing).map_or(bytes.len(), |e| e + closing.len());
            for &c in &bytes[i..end] {
                blank(&mut out, c);
            }
            i = end;
        } else if b == b'"' {
            out.push(b' ');
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                if bytes[i] == b'\\' {
                    blank(&mut out, bytes[i]);
                    i += 1;
                }
                if i < bytes.len() {
                    blank(&mut out, bytes[i]);
                    i += 1;
                }
            }
            out.push(b' ');
            i += 1;
        } else if b == b'\'' {
            // A char literal ('a', '\n', '\u{1F600}') — not a lifetime ('a without a closing ').
            let close = if next == Some(b'\\') {
                bytes[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|p| i + 2 + p)
            } else {
                let width = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (bytes.get(i + 1 + width) == Some(&b'\'')).then_some(i + 1 + width)
            };
            match close {
                Some(end) => {
                    for &c in &bytes[i..=end] {
                        blank(&mut out, c);
                    }
                    i = end + 1;
                }
                None => {
                    out.push(b);
                    i += 1;
                }
            }
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn find(haystack: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// The code without the items under `#[cfg(test)]` (a `mod tests { … }`, a test-only fn or
/// `use`).
fn without_tests(code: &str) -> String {
    let bytes = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while let Some(at) = code[i..].find("#[cfg(test)]").map(|p| p + i) {
        out.push_str(&code[i..at]);
        // The item ends at `;` before any `{`, or at the `}` that closes its first `{`.
        let mut j = at + "#[cfg(test)]".len();
        let mut depth = 0usize;
        while j < bytes.len() {
            match bytes[j] {
                b';' if depth == 0 => {
                    j += 1;
                    break;
                }
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        j += 1;
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        i = j.min(bytes.len());
    }
    out.push_str(&code[i..]);
    out
}

/// Every module path the code names, made absolute: `crate::a::b`, `super::x` and `self::x`
/// resolved against `module`, and `child::x` where `child` is a module the file declares.
fn paths_named(code: &str, module: &[String]) -> BTreeSet<Vec<String>> {
    let declared = declared_modules(code);
    let mut found = BTreeSet::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if !starts_word || !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') {
            i += 1;
            continue;
        }
        let end = word_end(bytes, i);
        let word = &code[i..end];
        let anchored = matches!(word, "crate" | "super" | "self") || declared.contains(word);
        // A path is a word followed by `::` (a `self` alone is a method receiver).
        if !anchored || !code[end..].starts_with("::") {
            i = end;
            continue;
        }
        let base: Vec<String> = match word {
            "crate" => Vec::new(),
            "super" => {
                // In `a/b.rs` (module a::b) `super` is `a`; in `a/b/mod.rs` it is `a` too.
                let mut m = module.to_vec();
                m.pop();
                m
            }
            "self" => module.to_vec(),
            child => {
                let mut m = module.to_vec();
                m.push(child.to_string());
                m
            }
        };
        let (paths, next) = path_tree(code, end + 2, base);
        found.extend(paths);
        i = next;
    }
    found
}

fn word_end(bytes: &[u8], from: usize) -> usize {
    let mut j = from;
    while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
        j += 1;
    }
    j
}

fn skip_space(bytes: &[u8], mut j: usize) -> usize {
    while j < bytes.len() && bytes[j].is_ascii_whitespace() {
        j += 1;
    }
    j
}

/// The paths of a path or `use` tree starting at `at` (just past a `::`), each `base` followed
/// by its segments (`super::super::x` climbs); and where the tree ends.
fn path_tree(code: &str, at: usize, base: Vec<String>) -> (Vec<Vec<String>>, usize) {
    let bytes = code.as_bytes();
    let mut j = skip_space(bytes, at);
    let mut path = base;
    let mut out = Vec::new();
    loop {
        if bytes.get(j) == Some(&b'{') {
            // A group: each member a tree of its own.
            j += 1;
            loop {
                j = skip_space(bytes, j);
                match bytes.get(j) {
                    Some(b'}') => return (out, j + 1),
                    Some(b',') => j += 1,
                    None => return (out, j),
                    Some(b) if b.is_ascii_alphabetic() || *b == b'_' => {
                        let end = word_end(bytes, j);
                        let word = &code[j..end];
                        if word == "self" {
                            out.push(path.clone());
                            j = end;
                            continue;
                        }
                        let mut member = path.clone();
                        member.push(word.to_string());
                        if code[end..].starts_with("::") {
                            let (inner, next) = path_tree(code, end + 2, member);
                            out.extend(inner);
                            j = next;
                        } else {
                            out.push(member);
                            j = end;
                        }
                    }
                    Some(_) => j += 1,
                }
            }
        }
        if bytes.get(j) == Some(&b'*') {
            out.push(path);
            return (out, j + 1);
        }
        let end = word_end(bytes, j);
        if end == j {
            out.push(path);
            return (out, j);
        }
        let word = &code[j..end];
        if word == "super" {
            path.pop();
        } else {
            path.push(word.to_string());
        }
        if code[end..].starts_with("::") {
            j = skip_space(bytes, end + 2);
        } else {
            out.push(path);
            return (out, end);
        }
    }
}

/// The modules a file declares (`mod x;`, `pub mod x;`, `pub(crate) mod x { … }`).
fn declared_modules(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in code.lines() {
        let line = line.trim_start();
        let rest = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub(super) "))
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        if let Some(name) = rest.strip_prefix("mod ") {
            let name: String = name
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

/// The file a module path names: the longest prefix of it that is a file of the tree.
pub fn file_of<'a>(files: &'a BTreeMap<Vec<String>, File>, path: &[String]) -> Option<&'a File> {
    (0..=path.len())
        .rev()
        .find_map(|n| files.get(&path[..n]))
        .filter(|f| !f.module.is_empty() || path.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(code: &str, module: &[&str]) -> Vec<String> {
        let module: Vec<String> = module.iter().map(|s| s.to_string()).collect();
        let code = without_tests(&strip_comments_and_strings(code));
        paths_named(&code, &module)
            .into_iter()
            .map(|p| p.join("::"))
            .collect()
    }

    #[test]
    fn use_trees_inline_paths_and_relative_paths_are_all_found() {
        let code = r#"
            use crate::k8s::{status::{AttemptSummary, PodSummary}, labels};
            use super::super::notice::Notice;
            mod child;
            fn f() { crate::sanitize::one_line("crate::fake::path"); child::go(); self::g(); }
            // crate::in_a_comment
            #[cfg(test)]
            mod tests { use crate::engine::World; }
        "#;
        let found = named(code, &["engine", "world", "guards"]);
        assert_eq!(
            found,
            [
                "engine::notice::Notice",
                "engine::world::guards::child::go",
                "engine::world::guards::g",
                "k8s::labels",
                "k8s::status::AttemptSummary",
                "k8s::status::PodSummary",
                "sanitize::one_line",
            ]
        );
    }

    #[test]
    fn lifetimes_are_not_char_literals() {
        let code = "fn f<'a>(x: &'a str) -> char { let c = '\\''; crate::names::x(c) }";
        assert_eq!(named(code, &["a"]), ["names::x"]);
    }
}
