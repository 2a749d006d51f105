//! Small facts about objects that every part of the simulated API server reads or stamps.

use serde_json::{Value, json};

pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub fn now() -> String {
    crate::clock::now_rfc3339()
}

pub fn name(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub fn namespace(obj: &Value) -> &str {
    obj.pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub fn uid(obj: &Value) -> &str {
    obj.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub fn label<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.pointer("/metadata/labels")?.get(key)?.as_str()
}

pub fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.pointer("/metadata/annotations")?.get(key)?.as_str()
}

pub fn is_deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

/// Owner UIDs from `metadata.ownerReferences`.
pub fn owner_uids(obj: &Value) -> Vec<&str> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| refs.iter().filter_map(|r| r["uid"].as_str()).collect())
        .unwrap_or_default()
}

pub fn owner_reference(owner: &Value, api_version: &str, kind: &str) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "name": name(owner),
        "uid": uid(owner),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// A random suffix from the alphabet `generateName` uses (no vowels, no look-alikes).
pub fn random_suffix(len: usize) -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..len)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect()
}

/// Seconds since an RFC 3339 timestamp (0 when it cannot be read).
pub fn seconds_since(ts: Option<&str>) -> i64 {
    ts.and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| (jiff::Timestamp::now() - t).get_seconds())
        .unwrap_or(0)
}
