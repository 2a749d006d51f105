//! The house's layers, checked: README's "How it fits together" lists Gantry's modules as an
//! order, bottom to top, and this test holds the code to it. A module may use what lies below
//! its layer, or beside it in the same layer as long as no two modules use each other; never
//! what lies above. No files of `src/` may form an import cycle (a parent's `mod` and a
//! child's use of its ancestors do not count: that is how Rust nests). The source is read as
//! text (`scan`), so the check costs no build and cannot drift from the code.

mod scan;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use scan::{File, file_of, read_tree};

/// Bottom to top, as README's "How it fits together" lists them.
pub const LAYERS: &[&[&str]] = &[
    // Leaves every layer may use.
    &[
        "sanitize",
        "names",
        "paths",
        "backoff",
        "output",
        "private_file",
        "logging",
        "keys",
        "severity",
        "secret_url",
    ],
    // What the read model is said in: notice kinds, end classes and fates, requests, wait
    // causes, label and annotation names.
    &["vocabulary"],
    &["pricing", "metrics", "dcgm"],
    &["config"],
    &["notify", "code"],
    &["k8s", "gke"],
    &["ends", "waiting", "meter", "kubeconfig", "watcher"],
    &["connect", "simulated", "sim"],
    &["engine"],
    &["settings"],
    &["app", "ui", "viewer", "health"],
    &["tui", "serve"],
    &["cli", "commands"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn src() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))
}

/// Each file's imports as files: (importer, imported), ancestors left out.
fn file_edges(files: &BTreeMap<Vec<String>, File>) -> BTreeSet<(Vec<String>, Vec<String>)> {
    let mut edges = BTreeSet::new();
    for file in files.values() {
        for path in &file.paths {
            let Some(to) = file_of(files, path) else {
                continue;
            };
            let ancestor = file.module.starts_with(&to.module);
            if to.module != file.module && !ancestor {
                edges.insert((file.module.clone(), to.module.clone()));
            }
        }
    }
    edges
}

/// The strongly connected groups of more than one node (Tarjan's algorithm).
fn cycles<N: Ord + Clone>(edges: &BTreeSet<(N, N)>) -> Vec<Vec<N>> {
    struct Walk<'a, N> {
        next: &'a BTreeMap<N, Vec<N>>,
        index: BTreeMap<N, usize>,
        low: BTreeMap<N, usize>,
        stack: Vec<N>,
        on_stack: BTreeSet<N>,
        found: Vec<Vec<N>>,
    }
    impl<N: Ord + Clone> Walk<'_, N> {
        fn visit(&mut self, n: &N) {
            let i = self.index.len();
            self.index.insert(n.clone(), i);
            self.low.insert(n.clone(), i);
            self.stack.push(n.clone());
            self.on_stack.insert(n.clone());
            for m in self.next.get(n).into_iter().flatten() {
                if !self.index.contains_key(m) {
                    self.visit(m);
                    let low = self.low[n].min(self.low[m]);
                    self.low.insert(n.clone(), low);
                } else if self.on_stack.contains(m) {
                    let low = self.low[n].min(self.index[m]);
                    self.low.insert(n.clone(), low);
                }
            }
            if self.low[n] == self.index[n] {
                let mut group = Vec::new();
                while let Some(m) = self.stack.pop() {
                    self.on_stack.remove(&m);
                    let done = m == *n;
                    group.push(m);
                    if done {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort();
                    self.found.push(group);
                }
            }
        }
    }
    let mut next: BTreeMap<N, Vec<N>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a.clone()).or_default().push(b.clone());
        next.entry(b.clone()).or_default();
    }
    let mut walk = Walk {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    let nodes: Vec<N> = next.keys().cloned().collect();
    for n in &nodes {
        if !walk.index.contains_key(n) {
            walk.visit(n);
        }
    }
    walk.found
}

/// What breaks the layers, in words: modules importing a higher layer (or one not in the
/// list), modules of one layer using each other, and cycles of files.
pub fn violations(src: &Path) -> Vec<String> {
    let files = read_tree(src);
    let edges = file_edges(&files);
    let mut found = Vec::new();
    let mut modules = BTreeSet::new();
    for (from, to) in &edges {
        let (Some(a), Some(b)) = (from.first(), to.first()) else {
            continue;
        };
        if a == b {
            continue;
        }
        match (layer_of(a), layer_of(b)) {
            (Some(la), Some(lb)) if lb > la => found.push(format!(
                "{} imports {}: `{a}` lies below `{b}`",
                from.join("::"),
                to.join("::")
            )),
            (Some(_), Some(_)) => {
                modules.insert((a.clone(), b.clone()));
            }
            (None, _) => found.push(format!("module `{a}` is in no layer: add it to LAYERS")),
            (_, None) => found.push(format!("module `{b}` is in no layer: add it to LAYERS")),
        }
    }
    for group in cycles(&modules) {
        let importing: Vec<String> = edges
            .iter()
            .filter(|(f, t)| {
                f.first() != t.first()
                    && f.first().is_some_and(|m| group.contains(m))
                    && t.first().is_some_and(|m| group.contains(m))
            })
            .map(|(f, t)| format!("{} → {}", f.join("::"), t.join("::")))
            .collect();
        found.push(format!(
            "modules use each other: {} ({})",
            group.join(", "),
            importing.join("; ")
        ));
    }
    for group in cycles(&edges) {
        let names: Vec<String> = group.iter().map(|m| m.join("::")).collect();
        found.push(format!("files import each other: {}", names.join(", ")));
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn no_module_imports_a_higher_layer_and_no_files_form_a_cycle() {
    let found = violations(src());
    assert!(
        found.is_empty(),
        "the layers of README's \"How it fits together\" are broken:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_check_sees_an_import_that_runs_back_up_and_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod config;\npub mod engine;\n");
    write(
        "config/mod.rs",
        "mod a;\nmod b;\nuse crate::engine::World;\n",
    );
    write("config/a.rs", "use super::b::X;\n");
    write("config/b.rs", "use crate::config::a::Y;\n");
    write("engine.rs", "use crate::config::Config;\n");
    write("k8s.rs", "use crate::gke::Client;\n");
    write("gke.rs", "fn f() { crate::k8s::run(); }\n");
    let found = violations(dir.path());
    assert_eq!(
        found,
        [
            "config imports engine: `config` lies below `engine`",
            "files import each other: config, engine",
            "files import each other: config::a, config::b",
            "files import each other: gke, k8s",
            "modules use each other: gke, k8s (gke → k8s; k8s → gke)",
        ],
        "{found:#?}"
    );
}

#[test]
fn every_module_of_the_crate_is_in_a_layer() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let missing: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';'))
        .filter(|m| layer_of(m).is_none())
        .collect();
    assert!(missing.is_empty(), "not in LAYERS: {missing:?}");
}
