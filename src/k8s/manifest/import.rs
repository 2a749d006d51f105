//! `--job-manifest FILE`: a Job written for kubectl, read into the config's `[job]` section in
//! place of the one the config file has. Every consumer (launch, retry, the TUI's keys, `status`,
//! `logs`, `gantry config`) then sees the same Job, checked by the same [`Config::validate`] and
//! by the checks `gantry launch` makes before it sends anything.
//!
//! Nothing is dropped on the way: a field the `[job]` section cannot hold is refused by its path
//! ([`fields`]), and what the manifest says is converted with Kubernetes' meaning kept
//! ([`convert`]: an absent `backoffLimit` is the API server's 6, not Gantry's 2).
//!
//! The file holds exactly one YAML (or JSON) document, a `batch/v1` Job. A file with more
//! documents is refused rather than partly used: Gantry would create the Job and nothing else.

mod convert;
mod fields;

use std::io::Read;
use std::path::Path;

use k8s_openapi::api::batch::v1::Job;
use serde::Deserialize;
use serde_norway::Value;

use crate::config::{Config, JobConfig};
use crate::k8s::manifest;

/// Why a Job manifest file could not be used; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid {
        path: std::path::PathBuf,
        message: String,
    },
}

/// Far more than any Job manifest (the API server refuses objects of about 1.5 MB).
pub const MAX_BYTES: u64 = 1024 * 1024;

/// Reads FILE into the `[job]` section that replaces the config's. The error names the file,
/// and the line and column or the field.
pub fn load(path: &Path) -> Result<JobConfig, ImportError> {
    let invalid = |message: String| ImportError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let read_error = |source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(invalid(format!(
            "larger than {} KiB: not a Job manifest",
            MAX_BYTES / 1024
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        invalid(format!(
            "not UTF-8 text (invalid byte at offset {}): not a YAML Job manifest",
            e.utf8_error().valid_up_to()
        ))
    })?;
    parse(&text).map_err(invalid)
}

/// Parses a Job manifest into the `[job]` section, checked as a config file's is.
pub fn parse(text: &str) -> Result<JobConfig, String> {
    let docs = documents(text)?;
    let (index, doc) = the_job(&docs)?;
    // Typed from the text rather than from `doc`, so a wrong type is reported where it is.
    let job = match serde_norway::Deserializer::from_str(text).nth(index) {
        Some(d) => Job::deserialize(d).map_err(|e| located(&e))?,
        None => return Err("the Job document could not be read again".into()),
    };
    fields::check(doc, &job)?;
    let cfg = convert::job_config(&job)?;
    check(&cfg)?;
    Ok(cfg)
}

/// Every document of the file; the first syntax error ends the reading (serde_norway's document
/// iterator is not to be trusted past one).
fn documents(text: &str) -> Result<Vec<Value>, String> {
    let mut docs = Vec::new();
    for doc in serde_norway::Deserializer::from_str(text) {
        docs.push(Value::deserialize(doc).map_err(|e| located(&e))?);
    }
    Ok(docs)
}

/// The one document that is not empty, which must be a `batch/v1` Job, and its index.
fn the_job(docs: &[Value]) -> Result<(usize, &Value), String> {
    let present: Vec<(usize, &Value)> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.is_null())
        .collect();
    let (index, doc) = match present.as_slice() {
        [] => return Err("holds no YAML document: a Job manifest was expected".into()),
        [one] => *one,
        several => {
            let mut kinds: Vec<String> = several
                .iter()
                .take(5)
                .map(|(i, d)| format!("{} ({})", i + 1, kind_of(d).unwrap_or("no kind")))
                .collect();
            if several.len() > kinds.len() {
                kinds.push("...".into());
            }
            return Err(format!(
                "holds {} YAML documents: {}; give Gantry a file with the Job alone (it creates nothing else, except the headless Service of an Indexed Job)",
                several.len(),
                kinds.join(", ")
            ));
        }
    };
    if !doc.is_mapping() {
        return Err(
            "not a Kubernetes object: a Job manifest is a mapping with apiVersion: batch/v1 and kind: Job".into(),
        );
    }
    match kind_of(doc) {
        Some("Job") => {}
        Some(kind) => {
            return Err(format!(
                "kind: {kind}: Gantry launches a Job (apiVersion: batch/v1, kind: Job)"
            ));
        }
        None => {
            return Err(
                "kind: missing: not a Kubernetes object (a Job manifest has apiVersion: batch/v1 and kind: Job)".into(),
            );
        }
    }
    match doc.get("apiVersion").and_then(Value::as_str) {
        Some("batch/v1") => Ok((index, doc)),
        Some(other) => Err(format!(
            "apiVersion: {other}: Gantry reads Jobs of apiVersion batch/v1"
        )),
        None => Err("apiVersion: missing: a Job manifest has apiVersion: batch/v1".into()),
    }
}

fn kind_of(doc: &Value) -> Option<&str> {
    doc.get("kind").and_then(Value::as_str)
}

/// `line L, column C: what` for an error serde_norway knows the place of.
fn located(e: &serde_norway::Error) -> String {
    let text = e.to_string();
    match e.location() {
        Some(l) => {
            let suffix = format!(" at line {} column {}", l.line(), l.column());
            format!(
                "line {}, column {}: {}",
                l.line(),
                l.column(),
                text.replacen(&suffix, "", 1)
            )
        }
        None => text,
    }
}

/// The `[job]` keys `Config::validate` names, and the manifest fields they came from.
const FIELDS: [(&str, &str); 6] = [
    ("job.pod-failure-policy", "spec.podFailurePolicy"),
    ("job.name", "metadata.name"),
    ("job.namespace", "metadata.namespace"),
    ("job.container", "spec.template.spec.containers[0].name"),
    ("job.restart-policy", "spec.template.spec.restartPolicy"),
    ("job.indexed", "spec.completionMode"),
];

/// The config file's checks, then those `gantry launch` makes before it sends anything.
fn check(cfg: &JobConfig) -> Result<(), String> {
    let config = Config {
        job: cfg.clone(),
        ..Config::default()
    };
    config.validate().map_err(
        |e| match FIELDS.iter().find(|(key, _)| e.starts_with(key)) {
            Some((_, field)) => format!("{field}: {e}"),
            None => e,
        },
    )?;
    manifest::training_job(cfg, None, 1).map_err(|e| e.to_string())?;
    manifest::worker_service(cfg, 1).map_err(|e| e.to_string())?;
    Ok(())
}
