//! `printServiceAccount`: name, how many secrets it lists, age.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::{creation_age, items, name_of, s};

pub(super) fn cells(account: &Value, now: Timestamp) -> Vec<Value> {
    vec![
        s(name_of(account)),
        json!(items(&account["secrets"]).len()),
        s(creation_age(account, now)),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kube::api::table::cells::fixtures::{ago, now};

    #[test]
    fn a_service_account_row_counts_its_secrets() {
        let sa = json!({"metadata": {"name": "default", "creationTimestamp": ago(3600)}});
        assert_eq!(
            cells(&sa, now()),
            vec![json!("default"), json!(0), json!("60m")]
        );
    }
}
