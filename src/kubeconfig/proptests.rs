//! Random kubeconfigs in the styles kubectl, gcloud and people write, with other entries whose
//! names need quoting: after the merge, every line outside our items (and the lines we own:
//! `current-context`, an empty list's key) is byte-identical and in order, and kube's own
//! kubeconfig loader (a different YAML parser) reads the same other entries and ours.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_norway::Value;

use super::edit::merge;
use super::*;

const NAME: &str = "gke_p_l_c";

#[derive(Debug, Clone, Copy)]
enum Quote {
    Plain,
    Single,
    Double,
}

/// How one item is written.
#[derive(Debug, Clone)]
struct Item {
    name: String,
    quote: Quote,
    name_first: bool,
    /// Which body variant (per list).
    body: u8,
    comment_before: Option<bool>,
    trailing_comment: bool,
    blank_after: bool,
}

/// One list: its items (ours at `ours_at`, old content, if set) and how it is empty if so.
#[derive(Debug, Clone)]
struct List {
    others: Vec<Item>,
    ours_at: Option<(usize, Item)>,
    empty: u8,
    /// A comment line after the last item: at column 0, or at the items' indentation.
    comment_after: Option<bool>,
}

#[derive(Debug, Clone)]
struct File {
    indent: usize,
    crlf: bool,
    header: bool,
    order: Vec<usize>,
    lists: [List; 3],
    current: Option<(usize, Quote)>,
    footer: bool,
}

/// What a line of the input is, for the comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tag {
    Kept,
    /// Part of an old item of ours (replaced).
    Ours,
    /// The `current-context` line, or an empty list's key line (we change both).
    Changed,
}

const LISTS: [&str; 3] = ["clusters", "contexts", "users"];

fn plain_safe(name: &str) -> bool {
    let reserved = [
        "yes", "no", "true", "false", "on", "off", "y", "n", "null", "~",
    ];
    !reserved.contains(&name.to_ascii_lowercase().as_str())
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn quoted(name: &str, quote: Quote) -> String {
    match quote {
        Quote::Plain if plain_safe(name) => name.to_string(),
        Quote::Plain | Quote::Single => format!("'{}'", name.replace('\'', "''")),
        Quote::Double => format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\"")),
    }
}

/// An item's lines (without line endings), its `-` at column `n`.
fn item_lines(list: usize, item: &Item, ours_old: bool, n: usize) -> Vec<String> {
    let pad = " ".repeat(n);
    let name = quoted(&item.name, item.quote);
    let comment = if item.trailing_comment {
        "  # note"
    } else {
        ""
    };
    let (key, body): (&str, Vec<String>) = match (list, item.body % 3) {
        (_, _) if ours_old && list == 0 => (
            "cluster",
            vec!["certificate-authority-data: T0xE".into(), "server: https://old".into()],
        ),
        (_, _) if ours_old && list == 1 => (
            "context",
            vec![format!("cluster: {NAME}"), format!("user: {NAME}"), "namespace: old".into()],
        ),
        (_, _) if ours_old => ("user", vec!["token: old-secret".into()]),
        (0, 0) => (
            "cluster",
            vec![format!("server: https://10.{}.0.1:6443{comment}", item.name.len())],
        ),
        (0, 1) => (
            "cluster",
            vec![
                "certificate-authority-data: TFMwdExTMUNSVWRKVGlCRFJWSlVTVVpKUTBGVVJTMHRMUzB0Q2sxSlNVVk1WRU5E".into(),
                "server: \"https://example.com\"".into(),
            ],
        ),
        (0, _) => ("cluster", vec!["insecure-skip-tls-verify: true".into(), "server: 'https://a'".into()]),
        (1, 0) => ("context", vec![format!("cluster: {name}"), format!("user: {name}{comment}")]),
        (1, 1) => ("context", vec![format!("cluster: {name}"), "namespace: \"007\"".into(), format!("user: {name}")]),
        (1, _) => ("context", vec![format!("{{cluster: {name}, user: {name}}}")]),
        (_, 0) => ("user", vec![format!("token: tok-{}{comment}", item.name.len())]),
        (_, 1) => (
            "user",
            vec![
                "exec:".into(),
                "  apiVersion: client.authentication.k8s.io/v1beta1".into(),
                "  command: gke-gcloud-auth-plugin".into(),
                "  installHint: Install gke-gcloud-auth-plugin for use with kubectl by following".into(),
                "    https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin".into(),
                "  provideClusterInfo: true".into(),
            ],
        ),
        (_, _) => (
            "user",
            vec!["client-key-data: |".into(), "  TFMwdExTMUNSVWRK".into(), "  VGlCRFJWSlVTVVpK".into()],
        ),
    };
    let name_line = format!("name: {name}{comment}");
    let mut lines = Vec::new();
    let flow_body = body.len() == 1 && body[0].starts_with('{');
    let body_lines = |first: &str| -> Vec<String> {
        if flow_body {
            vec![format!("{first}{key}: {}", body[0])]
        } else {
            let mut v = vec![format!("{first}{key}:")];
            v.extend(body.iter().map(|l| format!("{pad}    {l}")));
            v
        }
    };
    if item.name_first {
        lines.push(format!("{pad}- {name_line}"));
        lines.extend(body_lines(&format!("{pad}  ")));
    } else {
        lines.extend(body_lines(&format!("{pad}- ")));
        lines.push(format!("{pad}  {name_line}"));
    }
    lines
}

/// The file's text and a tag per line.
fn render(file: &File) -> (String, Vec<Tag>) {
    let mut lines: Vec<(String, Tag)> = Vec::new();
    let n = file.indent;
    if file.header {
        lines.push(("# written by hand, keep".into(), Tag::Kept));
    }
    let names: Vec<&str> = file.lists[1]
        .others
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    for &key in &file.order {
        match key {
            0 => lines.push(("apiVersion: v1".into(), Tag::Kept)),
            1 => lines.push(("kind: Config".into(), Tag::Kept)),
            2 => lines.push(("preferences: {}".into(), Tag::Kept)),
            3 => {
                let value = match file.current {
                    Some((i, quote)) if !names.is_empty() => quoted(names[i % names.len()], quote),
                    _ => "\"\"".into(),
                };
                lines.push((format!("current-context: {value}"), Tag::Changed));
            }
            _ => {
                let index = key - 4;
                let list = &file.lists[index];
                let mut items: Vec<(&Item, bool)> =
                    list.others.iter().map(|i| (i, false)).collect();
                if let Some((at, old)) = &list.ours_at {
                    items.insert(at % (items.len() + 1), (old, true));
                }
                let name = LISTS[index];
                if items.is_empty() {
                    match list.empty % 4 {
                        0 => lines.push((format!("{name}: null"), Tag::Changed)),
                        1 => lines.push((format!("{name}: []"), Tag::Changed)),
                        2 => lines.push((format!("{name}:"), Tag::Changed)),
                        _ => {}
                    }
                    continue;
                }
                lines.push((format!("{name}:"), Tag::Kept));
                for (item, ours) in items {
                    let tag = if ours { Tag::Ours } else { Tag::Kept };
                    match item.comment_before {
                        Some(true) => lines
                            .push((format!("{}# about the next one", " ".repeat(n)), Tag::Kept)),
                        Some(false) => lines.push(("# col 0".into(), Tag::Kept)),
                        None => {}
                    }
                    for line in item_lines(index, item, ours, n) {
                        lines.push((line, tag));
                    }
                    if item.blank_after && !ours {
                        lines.push((String::new(), Tag::Kept));
                    }
                }
                match list.comment_after {
                    Some(true) => {
                        lines.push((format!("{}  # after the list", " ".repeat(n)), Tag::Kept))
                    }
                    Some(false) => lines.push(("# after the list".into(), Tag::Kept)),
                    None => {}
                }
            }
        }
    }
    if file.footer {
        lines.push(("# the end".into(), Tag::Kept));
    }
    let newline = if file.crlf { "\r\n" } else { "\n" };
    let text = lines.iter().map(|(l, _)| format!("{l}{newline}")).collect();
    (text, lines.into_iter().map(|(_, t)| t).collect())
}

fn name_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9_-]{0,10}",
        "[a-zA-Z0-9 :#'\"@/.é-]{1,12}",
        Just("yes".to_string()),
        Just("null".to_string()),
        Just("123".to_string()),
        Just("- x".to_string()),
        Just("a: b # c".to_string()),
        Just("gke_p_l_c ".to_string()),
    ]
    .prop_filter("not ours", |n| n != NAME)
}

fn quote_strategy() -> impl Strategy<Value = Quote> {
    prop_oneof![Just(Quote::Plain), Just(Quote::Single), Just(Quote::Double)]
}

fn item_strategy(name: impl Strategy<Value = String>) -> impl Strategy<Value = Item> {
    (
        name,
        quote_strategy(),
        any::<bool>(),
        any::<u8>(),
        prop::option::of(any::<bool>()),
        any::<bool>(),
        prop::bool::weighted(0.2),
    )
        .prop_map(
            |(name, quote, name_first, body, comment_before, trailing_comment, blank_after)| Item {
                name,
                quote,
                name_first,
                body,
                comment_before,
                trailing_comment,
                blank_after,
            },
        )
}

fn list_strategy() -> impl Strategy<Value = List> {
    (
        prop::collection::btree_map(name_strategy(), item_strategy(Just(String::new())), 0..4),
        prop::option::of((any::<usize>(), item_strategy(Just(NAME.to_string())))),
        any::<u8>(),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(others, ours_at, empty, comment_after)| List {
            others: others
                .into_iter()
                .map(|(name, item)| Item { name, ..item })
                .collect(),
            ours_at,
            empty,
            comment_after,
        })
}

fn file_strategy() -> impl Strategy<Value = File> {
    (
        prop_oneof![Just(0usize), Just(2), Just(4)],
        prop::bool::weighted(0.2),
        any::<bool>(),
        Just((0..7).collect::<Vec<usize>>()).prop_shuffle(),
        [list_strategy(), list_strategy(), list_strategy()],
        prop::option::of((any::<usize>(), quote_strategy())),
        any::<bool>(),
    )
        .prop_map(
            |(indent, crlf, header, order, lists, current, footer)| File {
                indent,
                crlf,
                header,
                order,
                lists,
                current,
                footer,
            },
        )
}

/// Our items as the merge writes them, `-` at column `n`.
fn our_lines(entries: &Entries, n: usize) -> [Vec<String>; 3] {
    entries.lists().map(|(_, item)| {
        serde_norway::to_string(&Value::Sequence(vec![item.clone()]))
            .unwrap()
            .lines()
            .map(|l| format!("{}{l}", " ".repeat(n)))
            .collect()
    })
}

/// `out`'s lines (with their endings) without our items, the `current-context` line and the
/// key lines of lists that were empty before.
fn strip_output(out: &str, ours: &[Vec<String>; 3], new_keys: &[&str]) -> Vec<String> {
    let lines: Vec<&str> = out.split_inclusive('\n').collect();
    let bare = |l: &str| l.trim_end_matches('\n').trim_end_matches('\r').to_string();
    let mut kept = Vec::new();
    let mut i = 0;
    'next: while i < lines.len() {
        for block in ours {
            if i + block.len() <= lines.len()
                && (0..block.len()).all(|k| bare(lines[i + k]) == block[k])
            {
                i += block.len();
                continue 'next;
            }
        }
        let line = bare(lines[i]);
        if !line.starts_with("current-context:")
            && !new_keys.iter().any(|k| line == format!("{k}:"))
        {
            kept.push(lines[i].to_string());
        }
        i += 1;
    }
    kept
}

/// Named entries as kube reads them, as JSON, by list and name.
fn kube_view(
    text: &str,
) -> (
    Option<String>,
    [BTreeMap<String, Vec<serde_json::Value>>; 3],
) {
    let config = kube::config::Kubeconfig::from_yaml(text).unwrap();
    let mut lists: [BTreeMap<String, Vec<serde_json::Value>>; 3] = Default::default();
    for c in &config.clusters {
        lists[0]
            .entry(c.name.clone())
            .or_default()
            .push(serde_json::to_value(c).unwrap());
    }
    for c in &config.contexts {
        lists[1]
            .entry(c.name.clone())
            .or_default()
            .push(serde_json::to_value(c).unwrap());
    }
    for u in &config.auth_infos {
        lists[2]
            .entry(u.name.clone())
            .or_default()
            .push(serde_json::to_value(u).unwrap());
    }
    (config.current_context, lists)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_merge_keeps_every_other_line(file in file_strategy(), plugin in any::<bool>()) {
        let (input, tags) = render(&file);
        let credential = if plugin { Credential::GcloudPlugin } else { Credential::TokenFile("/tmp/token".into()) };
        let entries = Entries::new(NAME, "10.0.0.1", "Q0E=", &credential);
        let out = match merge(&input, &entries) {
            Ok(out) => out,
            Err(e) => return Err(TestCaseError::fail(format!("{e:?} for:\n{input}"))),
        };

        // Byte for byte, outside what is ours.
        let kept_input: Vec<String> = input
            .split_inclusive('\n')
            .zip(&tags)
            .filter(|(_, t)| **t == Tag::Kept)
            .map(|(l, _)| l.to_string())
            .collect();
        let new_keys: Vec<&str> = (0..3)
            .filter(|&i| file.lists[i].others.is_empty() && file.lists[i].ours_at.is_none())
            .map(|i| LISTS[i])
            .collect();
        // New lists take the indentation of the file's lists, or kubectl's when it has none.
        let indent = if new_keys.len() == 3 { 0 } else { file.indent };
        let kept_output = strip_output(&out, &our_lines(&entries, indent), &new_keys);
        prop_assert_eq!(kept_output.concat(), kept_input.concat(), "output:\n{}", out);
        if file.crlf {
            prop_assert!(out.split_inclusive('\n').all(|l| l.ends_with("\r\n")), "{}", out);
        } else {
            prop_assert!(!out.contains('\r'));
        }
        prop_assert!(!out.contains("old-secret"));

        // As kube reads it: the other entries unchanged, ours there, current.
        let (_, before) = kube_view(&input);
        let (current, after) = kube_view(&out);
        prop_assert_eq!(current.as_deref(), Some(NAME));
        let alone: Vec<String> = entries
            .lists()
            .iter()
            .map(|(list, item)| {
                let seq = serde_norway::to_string(&Value::Sequence(vec![(*item).clone()])).unwrap();
                format!("{list}:\n{seq}")
            })
            .collect();
        let (_, mine) = kube_view(&alone.concat());
        for i in 0..3 {
            let mut want = before[i].clone();
            want.remove(NAME);
            let mut got = after[i].clone();
            let ours = got.remove(NAME).unwrap_or_default();
            prop_assert_eq!(got, want);
            prop_assert_eq!(&ours, &mine[i][NAME]);
        }

        // And once more changes nothing.
        let again = merge(&out, &entries).unwrap();
        prop_assert_eq!(again, out);
    }
}
