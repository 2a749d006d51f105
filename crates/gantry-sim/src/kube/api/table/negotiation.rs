//! Content negotiation: whether a request's Accept header asks for a `meta.k8s.io` Table
//! rather than the plain object, decided the way kube-apiserver decides it.

use http::HeaderMap;

const TABLE_GROUP: &str = "meta.k8s.io";

/// Whether the Accept header asks for `as=Table` (meta.k8s.io v1 or v1beta1).
///
/// Like the apiserver's content negotiation, the first acceptable clause (highest `q`
/// first, header order otherwise) decides: a JSON clause without `as` means a plain
/// object, a clause naming a Table means a Table, clauses we cannot serve are skipped.
pub fn wants_table(headers: &HeaderMap) -> bool {
    let mut clauses: Vec<(f64, MediaRange)> = headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(MediaRange::parse)
        .filter(|(q, _)| *q > 0.0)
        .collect();
    // Stable: equal weights keep the header's order.
    clauses.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, clause) in clauses {
        if !clause.is_json() {
            continue;
        }
        match clause.param("as") {
            None => return false,
            Some("Table") => {
                let group_ok = clause.param("g") == Some(TABLE_GROUP);
                let version_ok = matches!(clause.param("v"), Some("v1" | "v1beta1"));
                if group_ok && version_ok {
                    return true;
                }
            }
            Some(_) => {}
        }
    }
    false
}

/// One clause of an Accept header: `type/subtype;key=value;...`.
struct MediaRange {
    essence: String,
    params: Vec<(String, String)>,
}

impl MediaRange {
    fn parse(clause: &str) -> Option<(f64, Self)> {
        let mut parts = clause.split(';');
        let essence = parts.next()?.trim().to_ascii_lowercase();
        if essence.is_empty() {
            return None;
        }
        let mut q = 1.0;
        let mut params = Vec::new();
        for part in parts {
            let Some((key, value)) = part.split_once('=') else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim().trim_matches('"').to_string();
            if key == "q" {
                q = value.parse().unwrap_or(1.0);
            } else {
                params.push((key, value));
            }
        }
        Some((q, Self { essence, params }))
    }

    fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Media types this server can answer: JSON, and the wildcards that allow it.
    fn is_json(&self) -> bool {
        matches!(
            self.essence.as_str(),
            "application/json" | "application/*" | "*/*"
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use http::HeaderValue;

    use super::*;

    #[test]
    fn wants_table_on_kubectl_header_only() {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static(
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
            ),
        );
        assert!(wants_table(&headers));

        let mut plain = HeaderMap::new();
        plain.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json"),
        );
        assert!(!wants_table(&plain));
        plain.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json, */*"),
        );
        assert!(!wants_table(&plain));
        assert!(!wants_table(&HeaderMap::new()));

        let mut beta = HeaderMap::new();
        beta.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json; as=Table; v=v1beta1; g=meta.k8s.io"),
        );
        assert!(wants_table(&beta));
    }
}
