//! `printLease`: name, the holder's identity (empty when no one holds it) and age.

use jiff::Timestamp;
use serde_json::Value;

use super::{creation_age, name_of, s, text};

pub(super) fn cells(lease: &Value, now: Timestamp) -> Vec<Value> {
    vec![
        s(name_of(lease)),
        s(text(&lease["spec"]["holderIdentity"])),
        s(creation_age(lease, now)),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kube::api::table::cells::fixtures::{ago, now};

    #[test]
    fn a_lease_row_names_its_holder_and_its_age() {
        let lease = json!({
            "metadata": {"name": "gantry-leader", "creationTimestamp": ago(125)},
            "spec": {"holderIdentity": "engine-a", "leaseDurationSeconds": 15},
        });
        assert_eq!(
            cells(&lease, now()),
            vec![json!("gantry-leader"), json!("engine-a"), json!("2m5s")]
        );
    }

    #[test]
    fn an_unheld_lease_prints_an_empty_holder() {
        let lease = json!({"metadata": {"name": "gantry-leader"}, "spec": {}});
        assert_eq!(cells(&lease, now())[1], "");
    }
}
