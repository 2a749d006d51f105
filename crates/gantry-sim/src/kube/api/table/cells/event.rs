//! `printEvent`: last and first seen, type, reason, object, source, message and count, from
//! either the core/v1 fields or the events.k8s.io ones a newer reporter fills.

use jiff::Timestamp;
use serde_json::Value;

use super::{age_of, int, name_of, s, since, text, timestamp};

/// `printEvent` (wide): Last Seen, Type, Reason, Object, Subobject, Source, Message,
/// First Seen, Count, Name.
pub(super) fn cells(ev: &Value, now: Timestamp) -> Vec<Value> {
    let first_seen = match timestamp(&ev["firstTimestamp"]) {
        Some(t) => since(now, t),
        None => age_of(now, &ev["eventTime"]),
    };
    let mut last_seen = match timestamp(&ev["lastTimestamp"]) {
        Some(t) => since(now, t),
        None => first_seen.clone(),
    };
    let mut count = int(&ev["count"]);
    if ev["series"].is_object() {
        last_seen = age_of(now, &ev["series"]["lastObservedTime"]);
        count = int(&ev["series"]["count"]);
    } else if count == 0 {
        count = 1;
    }
    let involved = &ev["involvedObject"];
    let kind = text(&involved["kind"]).to_lowercase();
    let target = match text(&involved["name"]) {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    let first_non_empty = |a: &Value, b: &Value| -> String {
        let a = text(a);
        if a.is_empty() {
            text(b).to_string()
        } else {
            a.to_string()
        }
    };
    let component = first_non_empty(&ev["source"]["component"], &ev["reportingComponent"]);
    let instance = first_non_empty(&ev["source"]["host"], &ev["reportingInstance"]);
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        s(last_seen),
        s(text(&ev["type"])),
        s(text(&ev["reason"])),
        s(target),
        s(text(&involved["fieldPath"])),
        s(source),
        s(text(&ev["message"]).trim()),
        s(first_seen),
        Value::from(count),
        s(name_of(ev)),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kube::api::table::cells::fixtures::{ago, now};

    #[test]
    fn event_rows() {
        let ev = json!({
            "metadata": {"name": "p1.17f", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "p1", "fieldPath": "spec.containers{main}"},
            "reason": "Pulled", "type": "Normal", "message": "Successfully pulled image \"busybox\"\n",
            "source": {"component": "kubelet", "host": "node-1"},
            "firstTimestamp": ago(600), "lastTimestamp": ago(30), "count": 3,
        });
        assert_eq!(
            cells(&ev, now()),
            vec![
                json!("30s"),
                json!("Normal"),
                json!("Pulled"),
                json!("pod/p1"),
                json!("spec.containers{main}"),
                json!("kubelet, node-1"),
                json!("Successfully pulled image \"busybox\""),
                json!("10m"),
                json!(3),
                json!("p1.17f")
            ]
        );

        let new_style = json!({
            "metadata": {"name": "e2"},
            "involvedObject": {"kind": "Job", "name": "pi"},
            "eventTime": "2025-06-01T11:59:00.000000Z",
            "reportingComponent": "job-controller",
        });
        let row = cells(&new_style, now());
        assert_eq!(row[0], "60s");
        assert_eq!(row[3], "job/pi");
        assert_eq!(row[5], "job-controller");
        assert_eq!(row[8], 1);
    }
}
