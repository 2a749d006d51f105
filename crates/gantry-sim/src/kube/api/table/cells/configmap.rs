//! `printConfigMap`: name, the number of keys (text and binary together) and age.

use jiff::Timestamp;
use serde_json::{Map, Value};

use super::{creation_age, name_of, s};

pub(super) fn cells(cm: &Value, now: Timestamp) -> Vec<Value> {
    let keys = |v: &Value| v.as_object().map_or(0, Map::len);
    let data = keys(&cm["data"]) + keys(&cm["binaryData"]);
    vec![
        s(name_of(cm)),
        Value::from(data as i64),
        s(creation_age(cm, now)),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kube::api::table::cells::fixtures::now;

    #[test]
    fn a_configmap_row_counts_text_and_binary_keys() {
        let cm = json!({"metadata": {"name": "cfg"}, "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}});
        assert_eq!(cells(&cm, now())[1], 3);
        assert_eq!(cells(&cm, now())[2], "<unknown>");
    }
}
