//! The text edit: our three items and `current-context` go into the kubeconfig's text, and
//! every other byte stays where it was.
//!
//! `serde_norway` reads the document: it validates it and says which items are ours (`name` equal
//! to the context's). `yaml-edit`, a lossless syntax tree, says where each item and key is in
//! the text. Then, in block style (what kubectl and gcloud write), the text is spliced
//! directly: an item of ours is replaced by our item's text in its own indentation, a new item
//! goes after the list's last item in that item's indentation, an empty list (`null`, `~`,
//! nothing, `[]`) is replaced by a block list where it stands, and a missing list is added at
//! the end, indented like the file's other lists (unindented, as kubectl writes them, if it has
//! none). Our items' text is `serde_norway`'s rendering, so its quoting is right. Edits to
//! flow-style lists (`clusters: [...]`), `current-context` and missing `apiVersion`, `kind`
//! and `preferences` are made through `yaml-edit`'s tree.
//!
//! The result is checked before it may be written:
//! - it parses, and is exactly the document we meant, compared as data: the old document with
//!   our items replacing the ones named like ours (or appended) and `current-context` ours;
//! - every byte outside the spans we meant to change (old items of ours, the line of an empty
//!   list, the `current-context` entry) is still there, in order, and within a line nothing
//!   was inserted except where we append to a flow list.
//!
//! Anything else is an error and nothing is written (see the parent module for the policy).
//!
//! `yaml-edit` (small: rowan and four tiny crates, maintained, released often) is trusted for
//! locating nodes and for the few tree edits, not for the result: the checks above are what
//! let a file be written.

use std::ops::Range;
use std::str::FromStr;

use serde_norway::{Mapping, Value};
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
    match serde_norway::from_str::<Value>(text) {
        Ok(Value::Mapping(root)) => Ok(root),
        Ok(_) => Err("the top level is not a mapping".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn unsupported(reason: impl Into<String>) -> EditError {
    EditError::Unsupported(reason.into())
}

/// A change made on the syntax tree, to a flow list, planned before any is made.
enum FlowEdit<'a> {
    /// Replace item `index` of the list with ours.
    Replace(&'static str, usize, &'a Value),
    /// Append ours to the list.
    Append(&'static str, &'a Value),
}

fn splice(text: &str, ours: &Entries) -> Result<String, EditError> {
    let before = parse_root(text).map_err(EditError::Invalid)?;
    let (_file, root) = tree(text)?;
    let newline = line_ending(text);
    let style = sequence_indent(text, &root);
    let key_indent = root.entries().next().map_or(0, |entry| {
        line_lead(text, range(entry.byte_range()).start).len()
    });

    // Plan every change on the original text: `touched` are the spans we may change (an empty
    // one marks an insertion point), `splices` text replacements in block style, `flow` tree
    // edits to flow lists, `appendix` new lists for the end of the file.
    let mut touched: Vec<Range<usize>> = Vec::new();
    let mut splices: Vec<(Range<usize>, String)> = Vec::new();
    let mut flow = Vec::new();
    let mut appendix = String::new();
    for (list, ours_item) in ours.lists() {
        let items = match before.get(list) {
            None => {
                let pad = " ".repeat(key_indent);
                appendix.push_str(&format!("{pad}{list}:{newline}"));
                appendix.push_str(&item_text(ours_item, key_indent + style, newline)?);
                continue;
            }
            Some(Value::Null) => None,
            Some(Value::Sequence(items)) if items.is_empty() => None,
            Some(Value::Sequence(items)) => Some(items),
            Some(_) => return Err(EditError::Invalid(format!("`{list}` is not a list"))),
        };
        let Some(items) = items else {
            // `list: null` (or `~`, nothing, `[]`): a block list in its place.
            let entry = root
                .find_entry_by_key(list)
                .ok_or_else(|| unsupported(format!("`{list}` cannot be found in the text")))?;
            let span = line_span(text, range(entry.byte_range()));
            let lead = line_lead(text, span.start);
            let mut new = format!("{lead}{list}:{newline}");
            new.push_str(&item_text(ours_item, lead.len() + style, newline)?);
            touched.push(span.clone());
            splices.push((span, new));
            continue;
        };
        let seq = root
            .get_sequence(list)
            .ok_or_else(|| unsupported(format!("`{list}` is not a plain list in the text")))?;
        let misaligned = || {
            unsupported(format!(
                "the items of `{list}` cannot be lined up with the text"
            ))
        };
        if seq.len() != items.len() {
            return Err(misaligned());
        }
        let owned: Vec<usize> = (0..items.len()).filter(|&i| ours.owns(&items[i])).collect();
        if owned.is_empty() {
            let last = seq.get(items.len() - 1).ok_or_else(misaligned)?;
            let node = range(last.byte_range());
            if seq.is_flow_style() {
                touched.push(node.end..node.end);
                flow.push(FlowEdit::Append(list, ours_item));
            } else {
                // After the last item, in its indentation.
                let span = line_span(text, node);
                let indent = block_item_indent(text, &span).ok_or_else(misaligned)?;
                let mut new = String::new();
                if !text[..span.end].ends_with('\n') {
                    new.push_str(newline);
                }
                new.push_str(&item_text(ours_item, indent, newline)?);
                touched.push(span.end..span.end);
                splices.push((span.end..span.end, new));
            }
        }
        for i in owned {
            if items[i] == *ours_item {
                continue;
            }
            let node = seq.get(i).ok_or_else(misaligned)?;
            let name = node
                .as_mapping()
                .and_then(|m| m.get("name"))
                .and_then(|n| n.as_scalar().map(|s| s.as_string()));
            if name.as_deref() != Some(ours.name.as_str()) {
                return Err(misaligned());
            }
            let node = range(node.byte_range());
            if seq.is_flow_style() {
                touched.push(node);
                flow.push(FlowEdit::Replace(list, i, ours_item));
            } else {
                // Our text in its place, in its indentation.
                let span = line_span(text, node);
                let indent = block_item_indent(text, &span).ok_or_else(misaligned)?;
                touched.push(span.clone());
                splices.push((span, item_text(ours_item, indent, newline)?));
            }
        }
    }
    let set_current = before.get("current-context").and_then(Value::as_str) != Some(&ours.name);
    if set_current && let Some(entry) = root.find_entry_by_key("current-context") {
        touched.push(range(entry.byte_range()));
    }

    // The text changes, from the end so that earlier offsets hold (an insertion where a
    // replaced span starts goes in after the replacement, so before it); then the tree's, on
    // the new text.
    let mut spliced = text.to_string();
    splices.sort_by_key(|(span, _)| std::cmp::Reverse((span.start, span.end)));
    for (span, new) in splices {
        spliced.replace_range(span, &new);
    }
    if !appendix.is_empty() {
        if !spliced.is_empty() && !spliced.ends_with('\n') {
            spliced.push_str(newline);
        }
        spliced.push_str(&appendix);
    }
    let (file, root) = tree(&spliced)?;
    for edit in flow {
        match edit {
            FlowEdit::Replace(list, index, item) => {
                let seq = root.get_sequence(list).ok_or_else(|| lost(list))?;
                let snippet = item_snippet(item)?;
                let mapping = snippet.as_mapping().ok_or_else(|| lost(list))?;
                if !seq.set(index, &mapping) {
                    return Err(lost(list));
                }
            }
            FlowEdit::Append(list, item) => {
                let seq = root.get_sequence(list).ok_or_else(|| lost(list))?;
                let snippet = item_snippet(item)?;
                let mapping = snippet.as_mapping().ok_or_else(|| lost(list))?;
                seq.push(&mapping);
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
        out.push_str(newline);
    }
    check(text, &before, &out, ours, &touched)?;
    Ok(out)
}

/// What stands before `at` on its line.
fn line_lead(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
    &text[line_start..at]
}

/// The lossless syntax tree of `text` and its top-level mapping, which must be in block style.
fn tree(text: &str) -> Result<(YamlFile, yaml_edit::Mapping), EditError> {
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
    Ok((file, root))
}

fn lost(what: &str) -> EditError {
    unsupported(format!("`{what}` was lost during the edit"))
}

fn range(position: yaml_edit::TextPosition) -> Range<usize> {
    position.start as usize..position.end as usize
}

/// A node's span grown to whole lines: from the start of its line when only spaces and a `-`
/// stand before it there, to the end of its last line when only spaces or a comment follow.
fn line_span(text: &str, span: Range<usize>) -> Range<usize> {
    let lead = line_lead(text, span.start);
    let start = if lead.chars().all(|c| matches!(c, ' ' | '-')) {
        span.start - lead.len()
    } else {
        span.start
    };
    let end = if text[..span.end].ends_with('\n') {
        span.end
    } else {
        let line_end = text[span.end..]
            .find('\n')
            .map_or(text.len(), |at| span.end + at + 1);
        let rest = text[span.end..line_end].trim();
        if rest.is_empty() || rest.starts_with('#') {
            line_end
        } else {
            span.end
        }
    };
    start..end
}

/// The column of the `-` that starts a block item's span, when its first line is `<spaces>- `.
fn block_item_indent(text: &str, span: &Range<usize>) -> Option<usize> {
    let first = &text[span.clone()];
    let indent = first.len() - first.trim_start_matches(' ').len();
    first[indent..].starts_with('-').then_some(indent)
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

/// Our item as YAML text, in `serde_norway`'s block style (and quoting).
fn item_yaml(item: &Value) -> Result<String, EditError> {
    serde_norway::to_string(item).map_err(|e| unsupported(e.to_string()))
}

/// A document holding just our item (a mapping).
fn item_snippet(item: &Value) -> Result<yaml_edit::Document, EditError> {
    snippet(&item_yaml(item)?)
}

/// Our item as a block list item, its `-` at column `indent`, each line ending in `newline`.
fn item_text(item: &Value, indent: usize, newline: &str) -> Result<String, EditError> {
    let seq = serde_norway::to_string(&Value::Sequence(vec![item.clone()]))
        .map_err(|e| unsupported(e.to_string()))?;
    let pad = " ".repeat(indent);
    Ok(seq.lines().map(|l| format!("{pad}{l}{newline}")).collect())
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
            doc.insert(
                key.into(),
                serde_norway::from_str(value).unwrap_or_default(),
            );
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
/// whole new lines may be inserted between their lines: within a line nothing may change, and
/// a line that started a line still does. After a touched span, the next run may start
/// anywhere later (that is where a replaced item or inserted text ends). An empty span in
/// `touched` marks a point where text is inserted.
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
        for piece in before[run.clone()].split_inclusive('\n') {
            let next = if offset == 0 || before.as_bytes()[offset - 1] == b'\n' {
                // From the start of a line: found where a line starts, after any inserted lines.
                after[found..]
                    .match_indices(piece)
                    .map(|(p, _)| found + p)
                    .find(|&p| p == 0 || after.as_bytes()[p - 1] == b'\n')
            } else {
                // The rest of a line after a touched span.
                after[found..].find(piece).map(|p| found + p)
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
