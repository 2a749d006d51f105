//! The settings carried into the cluster for the watcher: the resolved config as JSON in its
//! ConfigMap — every notification target's URL replaced by a file of its Secret — and the
//! Secret's data (those URLs, and the SSH files `install` adds). Versioned: a document says its
//! format and the Gantry that wrote it, and a watcher reads a newer Gantry's document as far as
//! it knows it, saying what it ignored, rather than crash-looping on a key it does not know.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::config::Config;

/// The format of the carried document this Gantry writes (and reads, and later ones as far
/// as it knows them).
pub const FORMAT: u64 = 1;

/// What goes into the cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Carried {
    /// The ConfigMap's document.
    pub document: String,
    /// The Secret's data, by file name.
    pub secrets: BTreeMap<String, String>,
}

/// The Secret's file holding the URL of the `n`th `[[notify]]` target (from 1).
fn notify_url_file(n: usize) -> String {
    format!("notify-{n}-url")
}

/// `config` (resolved: its project and location set) as the watcher is to run with it.
pub fn carry(config: &Config) -> Carried {
    let mut inside = config.clone();
    let mut secrets = BTreeMap::new();
    for (i, target) in inside.notify.iter_mut().enumerate() {
        if let Some(url) = target.address() {
            let file = notify_url_file(i + 1);
            secrets.insert(file.clone(), url.expose().to_string());
            target.url = None;
            target.url_from_file = None;
            // Relative: a file of the Secret's directory, wherever the pod has it.
            target.url_file = Some(std::path::PathBuf::from(file));
        }
    }
    // The watcher is not to make watchers.
    inside.watcher = Default::default();
    let document = json!({
        "format": FORMAT,
        "writtenBy": super::VERSION,
        "config": serde_json::to_value(&inside).unwrap_or(Value::Null),
    });
    Carried {
        document: document.to_string(),
        secrets,
    }
}

/// The config a carried document holds, as far as this Gantry knows it, and what it ignored
/// (`notify[0].grouping`, a key a newer Gantry wrote). An unreadable document is an error that
/// says what is wrong.
pub fn read(text: &str) -> Result<(Config, Vec<String>), String> {
    let document: Value =
        serde_json::from_str(text).map_err(|e| format!("the watcher's settings: {e}"))?;
    let format = document["format"].as_u64().unwrap_or(0);
    let mut ignored = Vec::new();
    if format > FORMAT {
        ignored.push(format!(
            "format {format} (written by Gantry {}; this is {} and reads format {FORMAT})",
            document["writtenBy"].as_str().unwrap_or("?"),
            super::VERSION
        ));
    }
    let mut config = document["config"].clone();
    // Each round drops one key this Gantry does not know; a config has far fewer than this.
    for _ in 0..256 {
        match serde_path_to_error::deserialize::<_, Config>(&config) {
            Ok(read) => return Ok((read, ignored)),
            Err(e) => {
                let message = e.inner().to_string();
                let Some(field) = unknown_field(&message) else {
                    return Err(format!("the watcher's settings: {}: {message}", e.path()));
                };
                let path: Vec<String> = e
                    .path()
                    .iter()
                    .filter_map(|s| match s {
                        serde_path_to_error::Segment::Map { key } => Some(key.clone()),
                        serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
                        _ => None,
                    })
                    .collect();
                // The path may end at the unknown key itself.
                let mut path = path;
                if path.last().map(String::as_str) == Some(field) {
                    path.pop();
                }
                if !remove(&mut config, &path, field) {
                    return Err(format!("the watcher's settings: {}: {message}", e.path()));
                }
                let mut shown = path.clone();
                shown.push(field.to_string());
                ignored.push(shown.join("."));
            }
        }
    }
    Err("the watcher's settings: too many keys this Gantry does not know".into())
}

/// The key serde's "unknown field `x`, expected …" names.
fn unknown_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split('`').next()
}

/// Removes `field` from the object at `path` in `value`; whether it was there.
fn remove(value: &mut Value, path: &[String], field: &str) -> bool {
    let mut at = value;
    for segment in path {
        at = match at {
            Value::Object(map) => match map.get_mut(segment) {
                Some(next) => next,
                None => return false,
            },
            Value::Array(list) => match segment.parse::<usize>().ok().and_then(|i| list.get_mut(i))
            {
                Some(next) => next,
                None => return false,
            },
            _ => return false,
        };
    }
    at.as_object_mut()
        .is_some_and(|map| map.remove(field).is_some())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const SECRET: &str = "/services/T000/B000/XXXXsecretXXXX";

    fn config() -> Config {
        let mut config = Config::parse(&format!(
            "project = \"p\"\nlocation = \"us-central1-a\"\n[[notify]]\nkind = \"slack\"\nurl = \"https://hooks.slack.com{SECRET}\"\n"
        ))
        .unwrap();
        config.watcher.image = Some("example.com/team/gantry:test".into());
        config
    }

    #[test]
    fn urls_go_to_the_secret_and_the_document_names_their_files_only() {
        let carried = carry(&config());
        assert!(!carried.document.contains(SECRET), "{}", carried.document);
        assert!(carried.document.contains("\"url-file\":\"notify-1-url\""));
        assert_eq!(
            carried.secrets["notify-1-url"],
            format!("https://hooks.slack.com{SECRET}")
        );
        let (read, ignored) = read(&carried.document).unwrap();
        assert!(ignored.is_empty(), "{ignored:?}");
        assert_eq!(read.project.as_deref(), Some("p"));
        assert_eq!(
            read.watcher,
            Default::default(),
            "a watcher makes no watcher"
        );
    }

    #[test]
    fn a_newer_gantry_s_keys_are_ignored_and_said_not_fatal() {
        let carried = carry(&config());
        let mut document: Value = serde_json::from_str(&carried.document).unwrap();
        document["format"] = json!(2);
        document["config"]["job"]["checkpoint-dir"] = json!("/ckpt");
        document["config"]["notify"][0]["grouping"] = json!("run");
        document["config"]["shiny"] = json!(true);
        let (read, ignored) = read(&document.to_string()).unwrap();
        assert_eq!(read.job.name, "ml-training-job");
        assert!(ignored[0].starts_with("format 2"), "{ignored:?}");
        let mut keys: Vec<&str> = ignored[1..].iter().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["job.checkpoint-dir", "notify.0.grouping", "shiny"]);
    }

    #[test]
    fn a_wrong_value_is_an_error_that_names_where() {
        let mut document: Value = serde_json::from_str(&carry(&config()).document).unwrap();
        document["config"]["job"]["backoff-limit"] = json!("many");
        let wrong = read(&document.to_string()).unwrap_err();
        assert!(wrong.contains("job.backoff-limit"), "{wrong}");
    }
}
