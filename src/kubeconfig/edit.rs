//! The text edit: our three entries and `current-context` go into the kubeconfig's text, and
//! every other byte stays where it was.
//!
//! `serde_yaml` reads the document (validation, and which items are ours); `yaml-edit`, a
//! lossless syntax tree, makes the edits in place: an item of ours is replaced where it stands,
//! a new one is appended to its list in that list's style, a missing or empty (`null`, `[]`) list
//! becomes a block list in the file's own indentation style, and `current-context` is set. The
//! result is then checked before it may be written:
//! - it parses, and is exactly the document we meant, compared as data with `serde_yaml`: the
//!   old document with our items replaced or appended and `current-context` set;
//! - every byte outside the spans we meant to change (our old items, the line of an empty list
//!   we replace, the `current-context` line) is still there, in order.
//!
//! Anything else is an error, and nothing is written.

use std::ops::Range;
use std::str::FromStr;

use serde_yaml::{Mapping, Value};
use yaml_edit::YamlFile;

use super::entries::Entries;

/// Why the text could not be merged.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum EditError {
    /// Not YAML, or not shaped as a kubeconfig (the top level is not a mapping, a list is not
    /// a list).
    Invalid(String),
    /// A valid kubeconfig, but the edit would not keep the rest of the file as it is.
    Unsupported(String),
}

/// What an empty (or comments-only) file gets before our entries, as kubectl writes it.
const SKELETON: &str = "apiVersion: v1\nclusters: null\ncontexts: null\ncurrent-context: \"\"\nkind: Config\npreferences: {}\nusers: null\n";

/// Keys a kubeconfig gets if it lacks them, as gcloud adds them.
const DEFAULTS: [(&str, &str); 3] = [
    ("apiVersion", "v1"),
    ("kind", "Config"),
    ("preferences", "{}"),
];

/// Merges our entries into `text` (the whole kubeconfig) and returns the new text.
pub(super) fn merge(text: &str, ours: &Entries) -> Result<String, EditError> {
    if holds_nothing(text) {
        let newline = line_ending(text);
        let mut base = text.to_string();
        if !base.is_empty() && !base.ends_with('\n') {
            base.push_str(newline);
        }
        base.push_str(&SKELETON.replace('\n', newline));
        return splice(&base, ours);
    }
    splice(text, ours)
}

/// Only blank lines and comments (or nothing at all).
fn holds_nothing(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .lines()
        .map(str::trim)
        .all(|line| line.is_empty() || line.starts_with('#'))
}

/// The file's line ending: CRLF if it uses it anywhere, else LF.
fn line_ending(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

/// Reads `text` as a kubeconfig document: a mapping at the top.
fn parse_root(text: &str) -> Result<Mapping, String> {
    match serde_yaml::from_str::<Value>(text) {
        Ok(Value::Mapping(root)) => Ok(root),
        Ok(_) => Err("the top level is not a mapping".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn unsupported(reason: impl Into<String>) -> EditError {
    EditError::Unsupported(reason.into())
}

/// One change to the tree, planned before any is made (byte ranges are of the original text).
enum Edit<'a> {
    /// Replace item `index` of the list with ours.
    Replace(&'static str, usize, &'a Value),
    /// Append ours to the (non-empty) list.
    Append(&'static str, &'a Value),
    /// The key is there with an empty value (`null`, `~`, nothing, `[]`): a new list in its place.
    Refill(&'static str, &'a Value),
    /// The key is missing: a new list at the end of the file.
    Add(&'static str, &'a Value),
}

fn splice(text: &str, ours: &Entries) -> Result<String, EditError> {
    let before = parse_root(text).map_err(EditError::Invalid)?;
    let file = YamlFile::from_str(text).map_err(|e| match e {
        yaml_edit::YamlError::Parse {
            line: Some(line), ..
        } => unsupported(format!("its syntax tree cannot be built (line {line})")),
        _ => unsupported("its syntax tree cannot be built"),
    })?;
    let mut documents = file.documents();
    let (Some(doc), None) = (documents.next(), documents.next()) else {
        return Err(unsupported("it is not exactly one YAML document"));
    };
    let root = doc
        .as_mapping()
        .ok_or_else(|| unsupported("its top level is not a plain mapping"))?;
    if root.is_flow_style() {
        return Err(unsupported(
            "it is JSON or a flow mapping, which cannot take a new entry without changing style",
        ));
    }

    let mut touched: Vec<Range<usize>> = Vec::new();
    let mut edits = Vec::new();
    for (list, ours_item) in ours.lists() {
        let items = match before.get(list) {
            None => {
                edits.push(Edit::Add(list, ours_item));
                continue;
            }
            Some(Value::Null) => None,
            Some(Value::Sequence(items)) if items.is_empty() => None,
            Some(Value::Sequence(items)) => Some(items),
            Some(_) => return Err(EditError::Invalid(format!("`{list}` is not a list"))),
        };
        let Some(items) = items else {
            let entry = root
                .find_entry_by_key(list)
                .ok_or_else(|| unsupported(format!("`{list}` cannot be found in the text")))?;
            touched.push(range(entry.byte_range()));
            edits.push(Edit::Refill(list, ours_item));
            continue;
        };
        let seq = root
            .get_sequence(list)
            .ok_or_else(|| unsupported(format!("`{list}` is not a plain list in the text")))?;
        if seq.len() != items.len() {
            return Err(unsupported(format!(
                "the items of `{list}` cannot be lined up with the text"
            )));
        }
        let owned: Vec<usize> = (0..items.len()).filter(|&i| ours.owns(&items[i])).collect();
        if owned.is_empty() {
            // Ours goes after the last item: text may be inserted there, even within a line
            // (a flow list).
            if let Some(last) = seq.get(items.len() - 1) {
                let end = range(last.byte_range()).end;
                touched.push(end..end);
            }
            edits.push(Edit::Append(list, ours_item));
        }
        for i in owned {
            if items[i] == *ours_item {
                continue;
            }
            let node = seq.get(i).ok_or_else(|| {
                unsupported(format!(
                    "the items of `{list}` cannot be lined up with the text"
                ))
            })?;
            let name = node
                .as_mapping()
                .and_then(|m| m.get("name"))
                .and_then(|n| n.as_scalar().map(|s| s.as_string()));
            if name.as_deref() != Some(ours.name.as_str()) {
                return Err(unsupported(format!(
                    "the items of `{list}` cannot be lined up with the text"
                )));
            }
            touched.push(item_span(text, range(node.byte_range())));
            edits.push(Edit::Replace(list, i, ours_item));
        }
    }
    let set_current = before.get("current-context").and_then(Value::as_str) != Some(&ours.name);
    if set_current && let Some(entry) = root.find_entry_by_key("current-context") {
        touched.push(range(entry.byte_range()));
    }

    // The edits, now that every range has been read.
    let style = sequence_indent(text, &root);
    for edit in edits {
        match edit {
            Edit::Replace(list, index, item) => {
                let seq = root.get_sequence(list).ok_or_else(|| lost(list))?;
                let snippet = item_snippet(item)?;
                let mapping = snippet.as_mapping().ok_or_else(|| lost(list))?;
                if !seq.set(index, &mapping) {
                    return Err(lost(list));
                }
            }
            Edit::Append(list, item) => {
                let seq = root.get_sequence(list).ok_or_else(|| lost(list))?;
                let snippet = item_snippet(item)?;
                let mapping = snippet.as_mapping().ok_or_else(|| lost(list))?;
                seq.push(&mapping);
            }
            Edit::Refill(list, item) => {
                let snippet = list_snippet(list, item, style)?;
                let seq = snippet.get_sequence(list).ok_or_else(|| lost(list))?;
                let index = root
                    .find_entry_index_by_key(list)
                    .ok_or_else(|| lost(list))?;
                root.remove(list);
                root.insert_at_index(index, list, &seq);
            }
            Edit::Add(list, item) => {
                let snippet = list_snippet(list, item, style)?;
                let seq = snippet.get_sequence(list).ok_or_else(|| lost(list))?;
                root.set(list, &seq);
            }
        }
    }
    if set_current {
        root.set("current-context", ours.name.as_str());
    }
    for (key, value) in DEFAULTS {
        if !before.contains_key(key) {
            let snippet = snippet(&format!("{key}: {value}\n"))?;
            let node = snippet.get(key).ok_or_else(|| lost(key))?;
            root.set(key, &node);
        }
    }

    let mut out = file.to_string();
    if out != text && !out.ends_with('\n') {
        out.push_str(line_ending(text));
    }
    check(text, &before, &out, ours, &touched)?;
    Ok(out)
}

fn lost(what: &str) -> EditError {
    unsupported(format!("`{what}` was lost during the edit"))
}

fn range(position: yaml_edit::TextPosition) -> Range<usize> {
    position.start as usize..position.end as usize
}

/// An item's span, from the start of its line when only its `- ` stands before it there.
fn item_span(text: &str, span: Range<usize>) -> Range<usize> {
    let line_start = text[..span.start].rfind('\n').map_or(0, |at| at + 1);
    let lead = &text[line_start..span.start];
    if lead.chars().all(|c| matches!(c, ' ' | '\t' | '-')) {
        line_start..span.end
    } else {
        span
    }
}

/// How far the file indents a list's `-` under its key (0: kubectl's and gcloud's style), as its
/// first block list of clusters, contexts or users does.
fn sequence_indent(text: &str, root: &yaml_edit::Mapping) -> usize {
    for list in ["clusters", "contexts", "users"] {
        let Some(seq) = root.get_sequence(list) else {
            continue;
        };
        if seq.is_flow_style() {
            continue;
        }
        let Some(first) = seq.get(0) else {
            continue;
        };
        let start = (first.byte_range().start as usize).min(text.len());
        let line_start = text[..start].rfind('\n').map_or(0, |at| at + 1);
        let line = &text[line_start..start];
        let indent = line.len() - line.trim_start_matches(' ').len();
        if line[indent..].starts_with('-') {
            return indent;
        }
    }
    0
}

/// Parses a piece of YAML we wrote ourselves.
fn snippet(text: &str) -> Result<yaml_edit::Document, EditError> {
    let file = YamlFile::from_str(text)
        .map_err(|_| unsupported("an entry of ours cannot be written as YAML"))?;
    file.document()
        .ok_or_else(|| unsupported("an entry of ours cannot be written as YAML"))
}

/// Our item as YAML text, in `serde_yaml`'s block style (and quoting).
fn item_yaml(item: &Value) -> Result<String, EditError> {
    serde_yaml::to_string(item).map_err(|e| unsupported(e.to_string()))
}

/// A document holding just our item (a mapping).
fn item_snippet(item: &Value) -> Result<yaml_edit::Document, EditError> {
    snippet(&item_yaml(item)?)
}

/// A document `list:` holding a block list with our item, its `-` indented by `indent`.
fn list_snippet(list: &str, item: &Value, indent: usize) -> Result<yaml_edit::Document, EditError> {
    let seq = serde_yaml::to_string(&Value::Sequence(vec![item.clone()]))
        .map_err(|e| unsupported(e.to_string()))?;
    let pad = " ".repeat(indent);
    let mut text = format!("{list}:\n");
    for line in seq.lines() {
        text.push_str(&pad);
        text.push_str(line);
        text.push('\n');
    }
    snippet(&text)
}

/// The document the edit must produce, as data: `before` with our items replacing the ones
/// named like ours (or appended), missing defaults added, and `current-context` ours.
fn expected(before: &Mapping, ours: &Entries) -> Mapping {
    let mut doc = before.clone();
    for (list, item) in ours.lists() {
        match doc.get_mut(list) {
            Some(Value::Sequence(items)) if items.iter().any(|i| ours.owns(i)) => {
                for existing in items.iter_mut().filter(|i| ours.owns(i)) {
                    *existing = item.clone();
                }
            }
            Some(Value::Sequence(items)) => items.push(item.clone()),
            _ => {
                doc.insert(list.into(), Value::Sequence(vec![item.clone()]));
            }
        }
    }
    doc.insert("current-context".into(), ours.name.as_str().into());
    for (key, value) in DEFAULTS {
        if !doc.contains_key(key) {
            doc.insert(key.into(), serde_yaml::from_str(value).unwrap_or_default());
        }
    }
    doc
}

/// The checks before the text may be written (see the module doc).
fn check(
    text: &str,
    before: &Mapping,
    out: &str,
    ours: &Entries,
    touched: &[Range<usize>],
) -> Result<(), EditError> {
    let after = parse_root(out)
        .map_err(|e| unsupported(format!("the edited file would not parse ({e})")))?;
    if after != expected(before, ours) {
        return Err(unsupported(
            "the edited file would not hold exactly the old entries and ours",
        ));
    }
    if let Some(offset) = first_lost_byte(text, touched, out) {
        let line = text[..offset].matches('\n').count() + 1;
        return Err(unsupported(format!(
            "the edit would change the text from line {line}"
        )));
    }
    Ok(())
}

/// Where the first piece of `before` outside `touched` starts that `after` lost; None when
/// all are there, in order.
///
/// The bytes between two touched spans (a run) must come through as they were, except that
/// whole new lines may be inserted between their lines: within a line nothing may change.
/// After a touched span, the next run may start anywhere later (that is where a replaced item
/// or inserted text ends). An empty span in `touched` marks a point where text is inserted.
pub(super) fn first_lost_byte(
    before: &str,
    touched: &[Range<usize>],
    after: &str,
) -> Option<usize> {
    let mut spans = touched.to_vec();
    spans.sort_by_key(|r| (r.start, r.end));
    let mut runs = Vec::new();
    let mut at = 0;
    for span in spans {
        if span.start > at {
            runs.push(at..span.start);
        }
        at = at.max(span.end);
    }
    if at < before.len() {
        runs.push(at..before.len());
    }
    let mut found = 0;
    for run in runs {
        let mut offset = run.start;
        for (i, piece) in before[run.clone()].split_inclusive('\n').enumerate() {
            let next = if i == 0 {
                after[found..].find(piece).map(|p| found + p)
            } else {
                // A whole line: found where a line starts, after any inserted lines.
                after[found..]
                    .match_indices(piece)
                    .map(|(p, _)| found + p)
                    .find(|&p| p == 0 || after.as_bytes()[p - 1] == b'\n')
            };
            match next {
                Some(p) => found = p + piece.len(),
                None => return Some(offset),
            }
            offset += piece.len();
        }
    }
    None
}
