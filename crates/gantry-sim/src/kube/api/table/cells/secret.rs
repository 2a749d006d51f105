//! `printSecret`: name, type, the number of keys and age.

use jiff::Timestamp;
use serde_json::Value;

use super::{creation_age, name_of, s, text};
use crate::kube::secrets::key_count;

pub(super) fn cells(secret: &Value, now: Timestamp) -> Vec<Value> {
    vec![
        s(name_of(secret)),
        s(text(&secret["type"])),
        Value::from(key_count(secret) as i64),
        s(creation_age(secret, now)),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kube::api::table::cells::fixtures::{ago, now};

    #[test]
    fn a_secret_row_shows_its_type_and_how_many_keys_it_has() {
        let secret = json!({"metadata": {"name": "creds", "creationTimestamp": ago(90)},
            "type": "Opaque", "data": {"a": "eA==", "b": "eQ=="}});
        assert_eq!(
            cells(&secret, now()),
            vec![json!("creds"), json!("Opaque"), json!(2), json!("90s")]
        );
    }
}
