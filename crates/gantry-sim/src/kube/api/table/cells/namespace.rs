//! `printNamespace`: name, phase and age.

use jiff::Timestamp;
use serde_json::Value;

use super::{creation_age, name_of, s, text};

pub(super) fn cells(ns: &Value, now: Timestamp) -> Vec<Value> {
    vec![
        s(name_of(ns)),
        s(text(&ns["status"]["phase"])),
        s(creation_age(ns, now)),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kube::api::table::cells::fixtures::{ago, now};

    #[test]
    fn a_namespace_row_has_its_phase_and_age() {
        let ns = json!({"metadata": {"name": "default", "creationTimestamp": ago(10)},
                        "status": {"phase": "Active"}});
        assert_eq!(
            cells(&ns, now()),
            vec![json!("default"), json!("Active"), json!("10s")]
        );
    }
}
