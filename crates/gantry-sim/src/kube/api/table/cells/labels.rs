//! Label sets and label selectors as the printers write them (`labels.FormatLabels`,
//! `metav1.FormatLabelSelector`): sorted by key, `<none>` when empty.

use serde_json::Value;

use super::{items, or_placeholder, text};

/// `metav1.FormatLabelSelector`: requirements sorted by key, `<none>` when empty.
pub(super) fn format_label_selector(selector: &Value) -> String {
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector["matchLabels"].as_object() {
        for (k, v) in labels {
            requirements.push((k.clone(), format!("{k}={}", text(v))));
        }
    }
    for expr in items(&selector["matchExpressions"]) {
        let key = text(&expr["key"]);
        let mut values: Vec<&str> = items(&expr["values"]).iter().map(text).collect();
        values.sort_unstable();
        let rendered = match text(&expr["operator"]) {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            _ => return "<error>".to_string(),
        };
        requirements.push((key.to_string(), rendered));
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    let joined = requirements
        .into_iter()
        .map(|(_, r)| r)
        .collect::<Vec<_>>()
        .join(",");
    or_placeholder(&joined, "<none>")
}

/// `labels.FormatLabels`: `k=v` sorted by key, `<none>` when empty.
pub(super) fn format_labels(labels: &Value) -> String {
    let mut pairs: Vec<(&String, &str)> = labels
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k, text(v))).collect())
        .unwrap_or_default();
    pairs.sort();
    let joined = pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    or_placeholder(&joined, "<none>")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn label_selector_formatting() {
        let sel = json!({"matchLabels": {"b": "2", "a": "1"},
                         "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]},
                                              {"key": "d", "operator": "DoesNotExist"}]});
        assert_eq!(format_label_selector(&sel), "a=1,b=2,c in (x,y),!d");
        assert_eq!(format_label_selector(&Value::Null), "<none>");
    }
}
