//! Small facts about objects that every part of the simulated API server reads or stamps.

use serde_json::{Value, json};

pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub fn now() -> String {
    crate::sim::clock::now_rfc3339()
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

/// RFC 1123 subdomain: lower-case alphanumerics, '-' and '.', at most 253 characters.
pub fn valid_subdomain(name: &str) -> bool {
    !name.is_empty() && name.len() <= 253 && name.split('.').all(valid_label)
}

/// RFC 1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric, ≤ 63.
pub fn valid_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

/// Age as kubectl prints it (apimachinery's HumanDuration): 5s, 2m30s, 95m, 4h10m, 30h, 3d4h.
pub fn human_duration(secs: i64) -> String {
    let s = secs.max(0);
    if s < 120 {
        return format!("{s}s");
    }
    let m = s / 60;
    if m < 10 {
        return if s % 60 == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{}s", s % 60)
        };
    }
    if m < 180 {
        return format!("{m}m");
    }
    let h = m / 60;
    if h < 8 {
        return if m % 60 == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{}m", m % 60)
        };
    }
    if h < 48 {
        return format!("{h}h");
    }
    if h < 24 * 8 {
        return if h % 24 == 0 {
            format!("{}d", h / 24)
        } else {
            format!("{}d{}h", h / 24, h % 24)
        };
    }
    if h < 24 * 365 * 2 {
        return format!("{}d", h / 24);
    }
    format!("{}y", h / 24 / 365)
}

/// Seconds since an RFC 3339 timestamp (0 when it cannot be read).
pub fn seconds_since(ts: Option<&str>) -> i64 {
    ts.and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| (jiff::Timestamp::now() - t).get_seconds())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(valid_subdomain("ml-training-job"));
        assert!(valid_subdomain("a.b-c"));
        assert!(!valid_subdomain("Bad_Name"));
        assert!(!valid_label("-x"));
        assert!(!valid_label(&"a".repeat(64)));
    }

    #[test]
    fn durations_like_kubectl() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(150), "2m30s");
        assert_eq!(human_duration(7200), "120m");
        assert_eq!(human_duration(5 * 3600 + 600), "5h10m");
        assert_eq!(human_duration(30 * 3600), "30h");
        assert_eq!(human_duration(3 * 86400), "3d");
    }
}
