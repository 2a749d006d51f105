//! Events, recorded the way the control plane's components record them: one object per
//! (object, reason, message), its count and lastTimestamp bumped when it happens again.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Value, json};

use super::meta;
use super::resources::Kind;
use super::store::Store;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EventType {
    Normal,
    Warning,
}

/// Remembers which event object stands for which (object, reason, message), so a repeat is a
/// count bump rather than a scan of every event.
/// (object uid, reason, message) → (namespace, event name).
type EventIndex = HashMap<(String, String, String), (String, String)>;

#[derive(Debug, Default)]
pub struct Recorder {
    index: Mutex<EventIndex>,
}

impl Recorder {
    /// Records an event about `involved` (any stored object) from `component`.
    pub fn record(
        &self,
        store: &Store,
        involved: &Value,
        event_type: EventType,
        reason: &str,
        message: &str,
        component: &str,
    ) {
        let namespace = match meta::namespace(involved) {
            "" => "default",
            ns => ns,
        };
        let kind = involved["kind"].as_str().unwrap_or_default();
        let uid = meta::uid(involved);
        let key = (uid.to_string(), reason.to_string(), message.to_string());
        let now = meta::now();
        let known = self
            .index
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned();
        if let Some((ns, name)) = known {
            let bumped = store.update(Kind::Event, &ns, &name, |e| {
                let count = e["count"].as_u64().unwrap_or(1) + 1;
                e["count"] = json!(count);
                e["lastTimestamp"] = json!(now);
            });
            if bumped.is_ok() {
                return;
            }
        }
        let name = format!(
            "{}.{:x}",
            meta::name(involved),
            jiff::Timestamp::now().as_nanosecond()
        );
        let event = json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": meta::new_uid(),
                "creationTimestamp": now,
            },
            "involvedObject": {
                "apiVersion": involved["apiVersion"],
                "kind": kind,
                "name": meta::name(involved),
                "namespace": meta::namespace(involved),
                "uid": uid,
                "resourceVersion": involved.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null),
            },
            "reason": reason,
            "message": message,
            "source": {"component": component},
            "reportingComponent": component,
            "reportingInstance": "",
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": match event_type { EventType::Normal => "Normal", EventType::Warning => "Warning" },
            "eventTime": null,
        });
        match store.create(Kind::Event, event) {
            Ok(_) => {
                self.index
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(key, (namespace.to_string(), name));
            }
            Err(e) => tracing::debug!(error = %e, reason, "event not recorded"),
        }
    }

    /// Forgets the events of an object that is gone.
    pub fn forget(&self, uid: &str) {
        self.index
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(u, _, _), _| u != uid);
    }
}
