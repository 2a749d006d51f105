//! Where the `hostile-strings` fault puts its strings in Kubernetes objects: every free-text
//! field a client shows — event messages and notes, condition messages, a pod's status message,
//! its containers' waiting and terminated messages (termination messages as long as the kubelet
//! allows), a Job's condition messages.

use serde_json::Value;

use super::resources::Kind;
use crate::hostile::{poison_at, poison_each};

/// Poisons the object's free-text fields.
pub fn poison_object(kind: Kind, obj: &mut Value) {
    match kind {
        Kind::Event => {
            poison_at(obj, &["message"], false);
            poison_at(obj, &["note"], false);
        }
        Kind::Pod => {
            poison_at(obj, &["status", "message"], false);
            poison_each(obj, &["status", "conditions"], &["message"], false);
            for list in ["containerStatuses", "initContainerStatuses"] {
                for state in ["state", "lastState"] {
                    poison_each(
                        obj,
                        &["status", list],
                        &[state, "waiting", "message"],
                        false,
                    );
                    poison_each(
                        obj,
                        &["status", list],
                        &[state, "terminated", "message"],
                        true,
                    );
                }
            }
        }
        Kind::Job | Kind::Node | Kind::Deployment | Kind::ReplicaSet => {
            poison_each(obj, &["status", "conditions"], &["message"], false);
        }
        Kind::Namespace | Kind::Service | Kind::ConfigMap | Kind::Secret | Kind::Lease => {}
        _ => {}
    }
}
