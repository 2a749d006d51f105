//! The patch formats kubectl and clients send: JSON merge patch (RFC 7386), JSON patch
//! (RFC 6902), Kubernetes strategic merge patch (lists merged by their merge keys, with the
//! `$patch`, `$setElementOrder`, `$deleteFromPrimitiveList` and `$retainKeys` directives), and
//! server-side apply, approximated as a strategic merge of the applied configuration.

use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PatchKind {
    Merge,
    Json,
    Strategic,
    Apply,
}

impl PatchKind {
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        let base = content_type.split(';').next().unwrap_or_default().trim();
        match base {
            "application/merge-patch+json" => Some(Self::Merge),
            "application/json-patch+json" => Some(Self::Json),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Some(Self::Apply),
            _ => None,
        }
    }
}

pub fn apply(kind: PatchKind, target: &Value, patch: &Value) -> Result<Value, String> {
    match kind {
        PatchKind::Merge => Ok(merge(target, patch)),
        PatchKind::Json => json_patch(target, patch),
        PatchKind::Strategic | PatchKind::Apply => Ok(strategic(target, patch, "")),
    }
}

/// RFC 7386: objects merge key by key, null deletes, anything else replaces.
pub fn merge(target: &Value, patch: &Value) -> Value {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            let mut out = t.clone();
            for (k, v) in p {
                if v.is_null() {
                    out.remove(k);
                } else {
                    let merged = merge(t.get(k).unwrap_or(&Value::Null), v);
                    out.insert(k.clone(), merged);
                }
            }
            Value::Object(out)
        }
        (_, Value::Object(p)) => merge(&Value::Object(Map::new()), &Value::Object(p.clone())),
        (_, p) => p.clone(),
    }
}

/// The merge key of a list field, as the Kubernetes types declare it.
fn merge_key(field: &str) -> Option<&'static str> {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "volumeMounts"
        | "imagePullSecrets"
        | "ownerReferences"
        | "resourceClaims" => Some("name"),
        "ports" => None, // decided by the item's shape below
        "conditions" => Some("type"),
        "tolerations" | "finalizers" | "args" | "command" => None,
        "volumeDevices" => Some("devicePath"),
        "hostAliases" => Some("ip"),
        "topologySpreadConstraints" => Some("topologyKey"),
        _ => None,
    }
}

fn list_key(field: &str, items: &[Value]) -> Option<&'static str> {
    if field == "ports" {
        // Container ports merge by containerPort, service ports by port.
        return items.iter().find_map(|i| {
            if i.get("containerPort").is_some() {
                Some("containerPort")
            } else if i.get("port").is_some() {
                Some("port")
            } else {
                None
            }
        });
    }
    merge_key(field)
}

fn strategic(target: &Value, patch: &Value, field: &str) -> Value {
    let (Value::Object(t), Value::Object(p)) = (target, patch) else {
        return patch.clone();
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut out = p.clone();
        out.remove("$patch");
        return Value::Object(out);
    }
    if p.get("$patch").and_then(Value::as_str) == Some("delete") {
        return Value::Null;
    }
    let _ = field;
    let mut out = t.clone();
    if let Some(retain) = p.get("$retainKeys").and_then(Value::as_array) {
        let keep: Vec<&str> = retain.iter().filter_map(Value::as_str).collect();
        out.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (k, v) in p {
        if k.starts_with("$setElementOrder/") || k == "$retainKeys" || k == "$patch" {
            continue;
        }
        if let Some(list_field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(existing)), Value::Array(remove)) =
                (out.get_mut(list_field), v)
            {
                existing.retain(|x| !remove.contains(x));
            }
            continue;
        }
        if v.is_null() {
            out.remove(k);
            continue;
        }
        let current = t.get(k).cloned().unwrap_or(Value::Null);
        let merged = match (&current, v) {
            (Value::Array(cur), Value::Array(items)) => {
                merge_list(k, cur, items, p.get(&format!("$setElementOrder/{k}")))
            }
            (Value::Object(_), Value::Object(_)) => strategic(&current, v, k),
            (_, Value::Object(_)) => strategic(&Value::Object(Map::new()), v, k),
            _ => v.clone(),
        };
        if merged.is_null() {
            out.remove(k);
        } else {
            out.insert(k.clone(), merged);
        }
    }
    Value::Object(out)
}

fn merge_list(field: &str, current: &[Value], patch: &[Value], order: Option<&Value>) -> Value {
    let Some(key) = list_key(field, patch).or_else(|| list_key(field, current)) else {
        // Lists without a merge key are replaced whole.
        return Value::Array(
            patch
                .iter()
                .filter(|i| i.get("$patch").is_none())
                .cloned()
                .collect(),
        );
    };
    let mut out: Vec<Value> = current.to_vec();
    for item in patch {
        let id = item.get(key);
        let directive = item.get("$patch").and_then(Value::as_str);
        let pos = out.iter().position(|e| e.get(key) == id && id.is_some());
        match (directive, pos) {
            (Some("delete"), Some(i)) => {
                out.remove(i);
            }
            (Some("delete"), None) => {}
            (_, Some(i)) => out[i] = strategic(&out[i], item, field),
            (_, None) => out.push(strategic(&Value::Object(Map::new()), item, field)),
        }
    }
    if let Some(Value::Array(order)) = order {
        let rank = |e: &Value| {
            order
                .iter()
                .position(|o| o.get(key) == e.get(key))
                .unwrap_or(usize::MAX)
        };
        out.sort_by_key(rank);
    }
    Value::Array(out)
}

/// RFC 6902 operations on JSON Pointers.
pub fn json_patch(target: &Value, patch: &Value) -> Result<Value, String> {
    let ops = patch
        .as_array()
        .ok_or("a JSON patch must be a list of operations")?;
    let mut doc = target.clone();
    for op in ops {
        let path = op["path"].as_str().ok_or("every operation needs a path")?;
        match op["op"].as_str().unwrap_or_default() {
            "add" => add(&mut doc, path, op["value"].clone())?,
            "remove" => {
                remove(&mut doc, path)?;
            }
            "replace" => {
                remove(&mut doc, path)?;
                add(&mut doc, path, op["value"].clone())?;
            }
            "move" => {
                let from = op["from"].as_str().ok_or("move needs from")?;
                let v = remove(&mut doc, from)?;
                add(&mut doc, path, v)?;
            }
            "copy" => {
                let from = op["from"].as_str().ok_or("copy needs from")?;
                let v = doc
                    .pointer(from)
                    .cloned()
                    .ok_or_else(|| format!("no value at {from}"))?;
                add(&mut doc, path, v)?;
            }
            "test" => {
                if doc.pointer(path) != Some(&op["value"]) {
                    return Err(format!("test failed at {path}"));
                }
            }
            other => return Err(format!("unknown JSON patch operation \"{other}\"")),
        }
    }
    Ok(doc)
}

fn split_pointer(path: &str) -> Result<(String, String), String> {
    let (parent, last) = path
        .rsplit_once('/')
        .ok_or_else(|| format!("bad path {path}"))?;
    Ok((
        parent.to_string(),
        last.replace("~1", "/").replace("~0", "~"),
    ))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = split_pointer(path)?;
    let target = doc
        .pointer_mut(&parent)
        .ok_or_else(|| format!("no value at {parent}"))?;
    match target {
        Value::Object(m) => {
            m.insert(last, value);
            Ok(())
        }
        Value::Array(a) => {
            if last == "-" {
                a.push(value);
                return Ok(());
            }
            let i: usize = last.parse().map_err(|_| format!("bad index {last}"))?;
            if i > a.len() {
                return Err(format!("index {i} out of range"));
            }
            a.insert(i, value);
            Ok(())
        }
        _ => Err(format!("cannot add below {parent}")),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, last) = split_pointer(path)?;
    let target = doc
        .pointer_mut(&parent)
        .ok_or_else(|| format!("no value at {parent}"))?;
    match target {
        Value::Object(m) => m.remove(&last).ok_or_else(|| format!("no value at {path}")),
        Value::Array(a) => {
            let i: usize = last.parse().map_err(|_| format!("bad index {last}"))?;
            if i >= a.len() {
                return Err(format!("index {i} out of range"));
            }
            Ok(a.remove(i))
        }
        _ => Err(format!("no value at {path}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch() {
        let t = json!({"a": 1, "b": {"c": 2, "d": 3}});
        let p = json!({"a": null, "b": {"c": 5}});
        assert_eq!(merge(&t, &p), json!({"b": {"c": 5, "d": 3}}));
    }

    #[test]
    fn strategic_merges_containers_by_name() {
        let t = json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}});
        let p = json!({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
            "containers": [{"name": "a", "image": "z"}]}});
        let out = strategic(&t, &p, "");
        assert_eq!(
            out,
            json!({"spec": {"containers": [{"name": "b", "image": "y"}, {"name": "a", "image": "z"}]}})
        );
        let del = json!({"spec": {"containers": [{"name": "b", "$patch": "delete"}]}});
        assert_eq!(
            strategic(&t, &del, "")["spec"]["containers"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
    }

    #[test]
    fn json_patch_ops() {
        let t = json!({"metadata": {"labels": {"a": "1"}}, "list": [1, 2]});
        let p = json!([
            {"op": "add", "path": "/metadata/labels/b", "value": "2"},
            {"op": "remove", "path": "/metadata/labels/a"},
            {"op": "add", "path": "/list/-", "value": 3},
            {"op": "replace", "path": "/list/0", "value": 0},
        ]);
        assert_eq!(
            json_patch(&t, &p),
            Ok(json!({"metadata": {"labels": {"b": "2"}}, "list": [0, 2, 3]}))
        );
        assert!(json_patch(&t, &json!([{"op": "test", "path": "/list/0", "value": 9}])).is_err());
    }
}
