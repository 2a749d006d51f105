//! Label selectors (equality- and set-based) and field selectors, as the API server parses them.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed `labelSelector`. The empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<Requirement>);

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("unable to parse requirement: {0}")]
pub struct SelectorError(pub String);

/// Splits on commas that are not inside parentheses.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 317
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn parse_set(rest: &str, whole: &str) -> Result<Vec<String>, SelectorError> {
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| SelectorError(whole.to_string()))?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
}

impl LabelSelector {
    pub fn parse(s: &str) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        for part in split_top_level(s) {
            let err = || SelectorError(part.to_string());
            let req = if let Some(key) = part.strip_prefix('!') {
                Requirement::NotExists(key.trim().to_string())
            } else if let Some((k, v)) = part.split_once("!=") {
                Requirement::NotEquals(k.trim().to_string(), v.trim().to_string())
            } else if let Some((k, v)) = part.split_once("==") {
                Requirement::Equals(k.trim().to_string(), v.trim().to_string())
            } else if let Some((k, v)) = part.split_once('=') {
                Requirement::Equals(k.trim().to_string(), v.trim().to_string())
            } else if let Some((k, rest)) = part.split_once(" notin ") {
                Requirement::NotIn(k.trim().to_string(), parse_set(rest, part)?)
            } else if let Some((k, rest)) = part.split_once(" in ") {
                Requirement::In(k.trim().to_string(), parse_set(rest, part)?)
            } else {
                Requirement::Exists(part.trim().to_string())
            };
            let key = match &req {
                Requirement::Equals(k, _)
                | Requirement::NotEquals(k, _)
                | Requirement::In(k, _)
                | Requirement::NotIn(k, _)
                | Requirement::Exists(k)
                | Requirement::NotExists(k) => k,
            };
            if !valid_key(key) {
                return Err(err());
            }
            reqs.push(req);
        }
        Ok(Self(reqs))
    }

    /// Builds a selector from a Job's `spec.selector` (matchLabels and matchExpressions).
    pub fn from_label_selector_json(selector: &Value) -> Self {
        let mut reqs = Vec::new();
        if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in labels {
                reqs.push(Requirement::Equals(
                    k.clone(),
                    v.as_str().unwrap_or_default().to_string(),
                ));
            }
        }
        if let Some(exprs) = selector.get("matchExpressions").and_then(Value::as_array) {
            for e in exprs {
                let key = e["key"].as_str().unwrap_or_default().to_string();
                let values: Vec<String> = e["values"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                match e["operator"].as_str().unwrap_or_default() {
                    "In" => reqs.push(Requirement::In(key, values)),
                    "NotIn" => reqs.push(Requirement::NotIn(key, values)),
                    "Exists" => reqs.push(Requirement::Exists(key)),
                    "DoesNotExist" => reqs.push(Requirement::NotExists(key)),
                    _ => {}
                }
            }
        }
        Self(reqs)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn matches(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
        })
    }

    pub fn matches_object(&self, obj: &Value) -> bool {
        self.matches(obj.pointer("/metadata/labels").and_then(Value::as_object))
    }
}

/// `labels.Selector.String()`: the requirements sorted by key, as a `labelSelector` parameter
/// spells them (a Scale's `status.selector`).
impl std::fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<(&str, String)> = self
            .0
            .iter()
            .map(|r| match r {
                Requirement::Equals(k, v) => (k.as_str(), format!("{k}={v}")),
                Requirement::NotEquals(k, v) => (k.as_str(), format!("{k}!={v}")),
                Requirement::In(k, vs) => (k.as_str(), format!("{k} in ({})", sorted(vs))),
                Requirement::NotIn(k, vs) => (k.as_str(), format!("{k} notin ({})", sorted(vs))),
                Requirement::Exists(k) => (k.as_str(), k.clone()),
                Requirement::NotExists(k) => (k.as_str(), format!("!{k}")),
            })
            .collect();
        parts.sort_by(|a, b| a.0.cmp(b.0));
        let joined: Vec<String> = parts.into_iter().map(|(_, p)| p).collect();
        f.write_str(&joined.join(","))
    }
}

fn sorted(values: &[String]) -> String {
    let mut values = values.to_vec();
    values.sort();
    values.join(",")
}

/// A parsed `fieldSelector`: `path=value`, `path==value` or `path!=value`, comma-separated.
/// Paths are the object's own field paths (`metadata.name`, `status.phase`, `involvedObject.uid`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    pub fn parse(s: &str) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        for part in split_top_level(s) {
            let (path, equal, value) = if let Some((k, v)) = part.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = part.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = part.split_once('=') {
                (k, true, v)
            } else {
                return Err(SelectorError(part.to_string()));
            };
            let path = path.trim();
            if path.is_empty() || !valid_key(path) {
                return Err(SelectorError(part.to_string()));
            }
            reqs.push((path.to_string(), equal, value.trim().to_string()));
        }
        Ok(Self(reqs))
    }

    /// The `metadata.name=X` requirement, which kubectl uses to watch a single object.
    pub fn name(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|(p, eq, _)| p == "metadata.name" && *eq)
            .map(|(_, _, v)| v.as_str())
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(path, equal, value)| {
            let mut cur = obj;
            for seg in path.split('.') {
                cur = cur.get(seg).unwrap_or(&Value::Null);
            }
            let actual = match cur {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (actual == *value) == *equal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(labels: Value) -> Value {
        json!({"metadata": {"name": "p", "labels": labels}, "status": {"phase": "Running"}})
    }

    #[test]
    fn equality_and_set_based() {
        let p = pod(json!({"job": "ml-training", "tier": "gpu"}));
        for (sel, want) in [
            ("job=ml-training", true),
            ("job==ml-training", true),
            ("job!=ml-training", false),
            ("job in (ml-training, other)", true),
            ("job notin (ml-training)", false),
            ("tier", true),
            ("!tier", false),
            ("!absent", true),
            ("job=ml-training,tier in (gpu)", true),
            ("", true),
        ] {
            let s = LabelSelector::parse(sel).unwrap();
            assert_eq!(s.matches_object(&p), want, "{sel}");
        }
    }

    #[test]
    fn rejects_garbage() {
        assert!(LabelSelector::parse("job in ml").is_err());
        assert!(LabelSelector::parse("a b c").is_err());
        assert!(FieldSelector::parse("nonsense").is_err());
    }

    #[test]
    fn field_selectors() {
        let p = pod(json!({}));
        assert!(FieldSelector::parse("metadata.name=p").unwrap().matches(&p));
        assert!(
            FieldSelector::parse("status.phase!=Failed")
                .unwrap()
                .matches(&p)
        );
        assert!(
            !FieldSelector::parse("status.phase=Failed")
                .unwrap()
                .matches(&p)
        );
        assert!(FieldSelector::parse("spec.nodeName=").unwrap().matches(&p));
        assert_eq!(
            FieldSelector::parse("metadata.name=p").unwrap().name(),
            Some("p")
        );
    }
}
