//! The generic webhook's body: Gantry's own JSON schema, versioned so that a receiver written
//! today keeps working. Version 1 (camelCase; `null` where unknown):
//!
//! ```json
//! {"version":1,"event":"attempt-ended","severity":"critical","cluster":"ml-gke-cluster",
//!  "job":"ml-training-job","run":"run-abc","attempt":3,"text":"attempt #3 failed: OOMKilled",
//!  "detail":{"class":"oom"},"costSoFar":12.5,"at":"2025-01-31T12:00:00Z",
//!  "key":"run-abc/attempt-ended/3","watch":"ssh -t -p 2222 gpu-box","link":null}
//! ```
//!
//! A field may be added to version 1; none is removed or changes meaning without a new version.

use serde::Serialize;

use super::message::{Message, plain};

/// The schema's version, the body's `version`.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    version: u32,
    event: &'static str,
    severity: &'static str,
    cluster: &'a str,
    job: Option<&'a str>,
    run: Option<&'a str>,
    attempt: Option<u32>,
    text: String,
    detail: &'a serde_json::Map<String, serde_json::Value>,
    cost_so_far: Option<f64>,
    at: jiff::Timestamp,
    key: &'a str,
    watch: Option<String>,
    link: Option<&'a str>,
}

/// The body for `event`, as JSON.
pub fn body(event: &Message) -> Vec<u8> {
    let body = Body {
        version: SCHEMA_VERSION,
        event: event.kind.name(),
        severity: event.severity.name(),
        cluster: &event.cluster,
        job: event.job.as_deref(),
        run: event.run.as_deref(),
        attempt: event.attempt,
        text: event.plain_text(),
        detail: &event.detail,
        cost_so_far: event.cost_so_far.filter(|c| c.is_finite()),
        at: event.at,
        key: &event.key,
        watch: event.watch.as_deref().map(plain),
        link: event.link.as_deref(),
    };
    // A map of strings to JSON values and plain fields always serialize.
    serde_json::to_vec(&body).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::Kind;
    use crate::vocabulary::Severity;
    use serde_json::json;

    #[test]
    fn the_body_is_schema_version_one_field_by_field() {
        let mut e = Message::new(
            Kind::AttemptEnded,
            Severity::Critical,
            "ml-gke-cluster",
            "attempt #3 failed:\nOOMKilled",
            "run-abc/attempt-ended/3",
        );
        e.job = Some("ml-training-job".into());
        e.run = Some("run-abc".into());
        e.attempt = Some(3);
        e.detail.insert("class".into(), json!("oom"));
        e.cost_so_far = Some(12.5);
        e.at = "2025-01-31T12:00:00Z".parse().unwrap();
        e.watch = Some("ssh -t -p 2222 gpu-box".into());
        let body: serde_json::Value = serde_json::from_slice(&body(&e)).unwrap();
        assert_eq!(
            body,
            json!({
                "version": 1,
                "event": "attempt-ended",
                "severity": "critical",
                "cluster": "ml-gke-cluster",
                "job": "ml-training-job",
                "run": "run-abc",
                "attempt": 3,
                "text": "attempt #3 failed: OOMKilled",
                "detail": {"class": "oom"},
                "costSoFar": 12.5,
                "at": "2025-01-31T12:00:00Z",
                "key": "run-abc/attempt-ended/3",
                "watch": "ssh -t -p 2222 gpu-box",
                "link": null,
            })
        );
    }

    #[test]
    fn what_is_unknown_is_null() {
        let e = Message::new(Kind::Idle, Severity::Info, "c", "idle", "k");
        let body: serde_json::Value = serde_json::from_slice(&body(&e)).unwrap();
        for field in ["job", "run", "attempt", "costSoFar", "watch", "link"] {
            assert_eq!(body[field], serde_json::Value::Null, "{field}");
        }
        assert_eq!(body["detail"], json!({}));
    }
}
