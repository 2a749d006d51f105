//! Server-side printing: the `meta.k8s.io/v1` Table that kube-apiserver v1.32 returns when
//! kubectl asks for `as=Table` (`kubectl get`, `get -o wide`, `get -w`).
//!
//! The columns and cell formats follow `pkg/printers/internalversion/printers.go`; the
//! apiserver always generates the wide table and kubectl hides the priority-1 columns
//! unless `-o wide` is given. Kinds without a printer get the default convertor's
//! `Name`, `Created At` columns. Content negotiation decides whether a Table is wanted
//! (`negotiation`), `columns` says what each kind's table has, `cells` fills its rows.

mod apps_columns;
mod cells;
mod columns;
mod negotiation;
mod rbac_columns;

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::Params;
use crate::kube::resources::ResourceType;
use crate::kube::store::Obj;
use columns::column_definitions;
pub use negotiation::wants_table;

const TABLE_API_VERSION: &str = "meta.k8s.io/v1";

/// A Table of `items` (all columns, wide ones with priority 1), metadata.resourceVersion = rv;
/// honours params["includeObject"] (None|Metadata (default)|Object).
pub fn table(resource: &ResourceType, items: &[Obj], rv: u64, params: &Params) -> Value {
    let now = Timestamp::now();
    let include = IncludeObject::from_params(params);
    let rows: Vec<Value> = items
        .iter()
        .map(|obj| row(resource, obj, now, include))
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": TABLE_API_VERSION,
        "metadata": {"resourceVersion": rv.to_string()},
        "columnDefinitions": column_definitions(resource.kind),
        "rows": rows,
    })
}

/// One watch event's object: a Table with one row for `obj`; `with_columns` false sends an
/// empty columnDefinitions list (kubectl reuses the previous ones).
pub fn watch_row(
    resource: &ResourceType,
    obj: &Value,
    with_columns: bool,
    params: &Params,
) -> Value {
    let now = Timestamp::now();
    let include = IncludeObject::from_params(params);
    let columns = if with_columns {
        column_definitions(resource.kind)
    } else {
        Value::Array(Vec::new())
    };
    let mut metadata = Map::new();
    if let Some(rv) = obj
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .filter(|rv| !rv.is_empty())
    {
        metadata.insert("resourceVersion".into(), Value::String(rv.to_string()));
    }
    json!({
        "kind": "Table",
        "apiVersion": TABLE_API_VERSION,
        "metadata": metadata,
        "columnDefinitions": columns,
        "rows": [row(resource, obj, now, include)],
    })
}

/// `includeObject` of metav1.TableOptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IncludeObject {
    None,
    Metadata,
    Object,
}

impl IncludeObject {
    fn from_params(params: &Params) -> Self {
        match params.get("includeObject").map(String::as_str) {
            Some("None") => Self::None,
            Some("Object") => Self::Object,
            _ => Self::Metadata,
        }
    }
}

fn row(resource: &ResourceType, obj: &Value, now: Timestamp, include: IncludeObject) -> Value {
    let (row_cells, conditions) = cells::cells(resource.kind, obj, now);
    let object = match include {
        IncludeObject::None => Value::Null,
        IncludeObject::Metadata => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": TABLE_API_VERSION,
            "metadata": match obj.get("metadata") {
                Some(m) if m.is_object() => m.clone(),
                _ => json!({}),
            },
        }),
        IncludeObject::Object => full_object(resource, obj),
    };
    let mut row = Map::new();
    row.insert("cells".into(), Value::Array(row_cells));
    if let Some(conditions) = conditions {
        row.insert("conditions".into(), conditions);
    }
    row.insert("object".into(), object);
    Value::Object(row)
}

/// The stored object, with its type meta filled in if a writer left it out.
fn full_object(resource: &ResourceType, obj: &Value) -> Value {
    let mut full = obj.clone();
    if let Some(map) = full.as_object_mut() {
        if !map.get("kind").is_some_and(Value::is_string) {
            map.insert("kind".into(), Value::String(resource.kind_name.to_string()));
        }
        if !map.get("apiVersion").is_some_and(Value::is_string) {
            map.insert("apiVersion".into(), Value::String(resource.api_version()));
        }
    }
    full
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::kube::api::table::cells::fixtures::pod;
    use crate::kube::resources::Kind;

    #[test]
    fn table_shape_and_include_object() {
        let resource = Kind::Pod.resource();
        let p: Obj = Arc::new(pod(json!({"phase": "Running"})));
        let t = table(resource, std::slice::from_ref(&p), 12345, &Params::new());
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(t["metadata"]["resourceVersion"], "12345");
        let columns = t["columnDefinitions"].as_array().unwrap();
        assert_eq!(columns.len(), 9);
        assert_eq!(columns[0]["format"], "name");
        assert_eq!(columns[4]["name"], "Age");
        assert_eq!(columns[5]["priority"], 1);
        assert_eq!(columns[3]["priority"], 0);
        let row = &t["rows"][0];
        assert_eq!(row["cells"].as_array().unwrap().len(), 9);
        assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(row["object"]["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(row["object"]["metadata"]["labels"]["app"], "x");
        assert!(row["object"].get("spec").is_none());

        let mut params = Params::new();
        params.insert("includeObject".into(), "Object".into());
        let t = table(resource, std::slice::from_ref(&p), 1, &params);
        assert_eq!(t["rows"][0]["object"]["kind"], "Pod");
        assert_eq!(t["rows"][0]["object"]["spec"]["nodeName"], "node-1");

        params.insert("includeObject".into(), "None".into());
        let t = table(resource, std::slice::from_ref(&p), 1, &params);
        assert!(t["rows"][0]["object"].is_null());

        let empty = table(resource, &[], 7, &Params::new());
        assert_eq!(empty["rows"], json!([]));

        let w = watch_row(resource, &p, false, &Params::new());
        assert_eq!(w["columnDefinitions"], json!([]));
        assert_eq!(w["metadata"]["resourceVersion"], "101");
        assert_eq!(w["rows"].as_array().unwrap().len(), 1);
        let w = watch_row(resource, &p, true, &Params::new());
        assert_eq!(w["columnDefinitions"].as_array().unwrap().len(), 9);

        for kind in [
            Kind::Job,
            Kind::Service,
            Kind::Node,
            Kind::Event,
            Kind::Namespace,
            Kind::ConfigMap,
            Kind::Secret,
            Kind::Lease,
        ] {
            let t = table(
                kind.resource(),
                &[Arc::new(json!({"metadata": {"name": "x"}}))],
                1,
                &Params::new(),
            );
            assert_eq!(
                t["rows"][0]["cells"].as_array().unwrap().len(),
                t["columnDefinitions"].as_array().unwrap().len(),
                "{kind:?}"
            );
        }
    }
}
