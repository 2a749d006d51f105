//! Get, list, create, replace, patch and delete of stored objects.

use std::sync::Arc;

use axum::response::Response;
use http::{HeaderValue, StatusCode};
use serde_json::{Value, json};

use super::json_body::{Items, json_bytes_response, to_json_with};
use super::{Params, Target, namespace_of, param, patch, table};
use crate::http_faults::json_response;
use crate::kube::admission::{self, FieldValidation};
use crate::kube::cluster::ClusterState;
use crate::kube::errors::ApiError;
use crate::kube::lifecycle::{self, DeleteOptions, Propagation};
use crate::kube::meta;
use crate::kube::resources::Kind;
use crate::kube::selectors::{FieldSelector, LabelSelector};
use crate::kube::store::{self, Key, Obj, StoreError, rv_of};

pub struct Filter {
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filter {
    pub fn from_params(params: &Params) -> Result<Self, ApiError> {
        let labels = LabelSelector::parse(param(params, "labelSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let fields = FieldSelector::parse(param(params, "fieldSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(format!("invalid field selector: {e}")))?;
        Ok(Self { labels, fields })
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.labels.matches_object(obj) && self.fields.matches(obj)
    }
}

/// `limit` and `continue` of a list, as the API server pages them.
struct Page {
    limit: usize,
    after: Option<Key>,
    /// The version of the list a `continue` token continues.
    rv: Option<u64>,
}

impl Page {
    fn from_params(params: &Params) -> Result<Self, ApiError> {
        let limit = match param(params, "limit").filter(|l| !l.is_empty()) {
            None => usize::MAX,
            Some(l) => match l.parse::<usize>() {
                Ok(0) => usize::MAX,
                Ok(n) => n,
                Err(_) => {
                    return Err(ApiError::bad_request(format!(
                        "limit: Invalid value: {l:?}: must be a non-negative integer"
                    )));
                }
            },
        };
        let Some(token) = param(params, "continue").filter(|c| !c.is_empty()) else {
            return Ok(Self {
                limit,
                after: None,
                rv: None,
            });
        };
        let (rv, after) = parse_continue(token).ok_or_else(|| {
            ApiError::bad_request(
                "continue key is not valid: pass the metadata.continue of the previous page",
            )
        })?;
        Ok(Self {
            limit,
            after: Some(after),
            rv: Some(rv),
        })
    }
}

/// The API server's token shape: base64 of `{"v":"meta.k8s.io/v1","rv":N,"start":"<key>\0"}`.
fn continue_token(rv: u64, last: &Key) -> String {
    use base64::Engine;
    let token = json!({
        "v": "meta.k8s.io/v1",
        "rv": rv,
        "start": format!("{}/{}\u{0}", last.0, last.1),
    });
    base64::engine::general_purpose::STANDARD.encode(token.to_string())
}

fn parse_continue(token: &str) -> Option<(u64, Key)> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(token)
        .ok()?;
    let token: Value = serde_json::from_slice(&bytes).ok()?;
    let rv = token.get("rv")?.as_u64()?;
    let start = token.get("start")?.as_str()?.trim_end_matches('\0');
    let (ns, name) = start.split_once('/')?;
    Some((rv, (ns.to_string(), name.to_string())))
}

fn ok_json(status: StatusCode, body: &Value, warnings: &[String]) -> Response {
    let mut response = json_response(status, body);
    for w in warnings {
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{}\"", w.replace('"', "'"))) {
            response.headers_mut().append(http::header::WARNING, v);
        }
    }
    response
}

pub fn list(
    state: &Arc<ClusterState>,
    target: &Target,
    params: &Params,
    wants_table: bool,
) -> Result<Response, ApiError> {
    let filter = Filter::from_params(params)?;
    let kind = target.resource.kind;
    let page = Page::from_params(params)?;
    let (items, rv, remaining) = state.store.list_page(
        kind,
        namespace_of(target),
        |o| filter.matches(o),
        page.after.as_ref(),
        page.limit,
    );
    // A continued list is the one list it continues, at that list's version.
    let rv = page.rv.unwrap_or(rv);
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if remaining > 0
        && let Some(last) = items.last()
    {
        metadata["continue"] = Value::from(continue_token(rv, &store::key_of(last)));
        metadata["remainingItemCount"] = Value::from(remaining);
    }
    if wants_table {
        let mut table = table::table(target.resource, &items, rv, params);
        table["metadata"] = metadata;
        return Ok(ok_json(StatusCode::OK, &table, &[]));
    }
    let envelope = json!({
        "kind": format!("{}List", target.resource.kind_name),
        "apiVersion": target.resource.api_version(),
        "metadata": metadata,
        "items": Value::Null,
    });
    // The items are written straight from the store's objects: a list of thousands of pods
    // would otherwise be deep-copied into a new document before being serialized.
    let list = Items(&items);
    let body = to_json_with(&envelope, "items", &list);
    Ok(json_bytes_response(StatusCode::OK, body))
}

fn fetch(state: &ClusterState, target: &Target, name: &str) -> Result<Obj, ApiError> {
    let ns = namespace_of(target).unwrap_or_default();
    state
        .store
        .get(target.resource.kind, ns, name)
        .ok_or_else(|| ApiError::not_found(target.resource, name))
}

pub fn get(
    state: &Arc<ClusterState>,
    target: &Target,
    name: &str,
    params: &Params,
    wants_table: bool,
) -> Result<Response, ApiError> {
    let obj = fetch(state, target, name)?;
    if wants_table {
        let rv = rv_of(&obj).unwrap_or(0);
        return Ok(ok_json(
            StatusCode::OK,
            &table::table(target.resource, &[obj], rv, params),
            &[],
        ));
    }
    Ok(ok_json(StatusCode::OK, &obj, &[]))
}

pub fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    if body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    serde_json::from_slice(body)
        .or_else(|_| serde_norway::from_slice::<Value>(body))
        .map_err(|e| {
            ApiError::bad_request(format!("the request body is not valid JSON or YAML: {e}"))
        })
}

fn dry_run(params: &Params) -> bool {
    params.get("dryRun").is_some_and(|v| v == "All")
}

pub fn create(
    state: &Arc<ClusterState>,
    target: &Target,
    params: &Params,
    body: &[u8],
) -> Result<Response, ApiError> {
    let obj = parse_body(body)?;
    let validation = FieldValidation::parse(param(params, "fieldValidation"));
    let kind = target.resource.kind;
    if dry_run(params) {
        let mut obj = obj;
        admission::stamp_new(target.resource, &mut obj, namespace_of(target))?;
        let warnings = admission::check_schema(target.resource, &obj, validation)?;
        admission::apply_defaults(target.resource, &mut obj)?;
        return Ok(ok_json(StatusCode::CREATED, &obj, &warnings));
    }
    let (stored, warnings) =
        lifecycle::create_validated(state, kind, namespace_of(target), obj, validation)?;
    Ok(ok_json(StatusCode::CREATED, &stored, &warnings))
}

/// Fields a write cannot change, kept from the stored object.
fn keep_server_fields(
    current: &Value,
    next: &mut Value,
    subresource: Option<&str>,
    kind: Kind,
) -> Result<(), String> {
    for key in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match current["metadata"].get(key) {
            Some(v) => next["metadata"][key] = v.clone(),
            None => {
                if let Some(m) = next["metadata"].as_object_mut() {
                    m.remove(key);
                }
            }
        }
    }
    next["apiVersion"] = current["apiVersion"].clone();
    next["kind"] = current["kind"].clone();
    match subresource {
        // The status subresource writes status only.
        Some("status") => {
            let status = next["status"].clone();
            *next = current.clone();
            next["status"] = status;
        }
        _ => {
            if current.get("status").is_some()
                && kind != Kind::Namespace
                && kind != Kind::Node
                && kind != Kind::Event
            {
                next["status"] = current["status"].clone();
            }
            if kind == Kind::Job {
                for field in ["template", "selector", "completionMode", "podFailurePolicy"] {
                    if current["spec"][field] != next["spec"][field] {
                        return Err(format!("spec.{field}: Invalid value: field is immutable"));
                    }
                }
                if current["spec"] != next["spec"] {
                    let generation = current["metadata"]["generation"].as_u64().unwrap_or(1) + 1;
                    next["metadata"]["generation"] = json!(generation);
                }
            }
            crate::kube::apps::admit_update(kind, current, next)?;
            crate::kube::rbac::admit_update(kind, current, next)?;
            if kind == Kind::Pod && current["spec"]["containers"] != next["spec"]["containers"] {
                let same_but_images = current["spec"]["containers"].as_array().map(Vec::len)
                    == next["spec"]["containers"].as_array().map(Vec::len);
                if !same_but_images {
                    return Err("spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`".into());
                }
            }
        }
    }
    Ok(())
}

/// Stores `next` in place of the object, with optimistic concurrency when it names a version.
fn write(
    state: &Arc<ClusterState>,
    target: &Target,
    name: &str,
    sub: Option<&str>,
    make: impl FnOnce(&Value) -> Result<Value, ApiError>,
) -> Result<Obj, ApiError> {
    let ns = namespace_of(target).unwrap_or_default().to_string();
    let kind = target.resource.kind;
    let resource = target.resource;
    let outcome = state
        .store
        .modify::<ApiError>(kind, &ns, name, None, |current| {
            let mut next = make(current)?;
            let version = |o: &Value| {
                o.pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
            };
            match version(&next) {
                None if !kind.allows_unconditional_update() => {
                    return Err(ApiError::resource_version_required(resource, name));
                }
                Some(expected) if Some(&expected) != version(current).as_ref() => {
                    return Err(ApiError::conflict(resource, name));
                }
                _ => {}
            }
            if meta::name(&next) != name {
                return Err(ApiError::bad_request(
                    "the name of the object does not match the name on the URL",
                ));
            }
            if resource.namespaced {
                next["metadata"]["namespace"] = json!(ns);
            }
            keep_server_fields(current, &mut next, sub, kind)
                .map_err(|m| ApiError::invalid(resource, name, &[("spec".into(), m)]))?;
            admission::admit_update(resource, &mut next)?;
            *current = next;
            Ok(())
        })?;
    let stored = outcome.map_err(|e| match e {
        StoreError::NotFound => ApiError::not_found(resource, name),
        other => ApiError::from_store(other, resource, name),
    })?;
    lifecycle::remove_if_finalized(state, kind, &stored);
    Ok(stored)
}

pub fn replace(
    state: &Arc<ClusterState>,
    target: &Target,
    name: &str,
    sub: Option<&str>,
    params: &Params,
    body: &[u8],
) -> Result<Response, ApiError> {
    let obj = parse_body(body)?;
    let validation = FieldValidation::parse(param(params, "fieldValidation"));
    let warnings =
        admission::check_schema(target.resource, &with_type(target, obj.clone()), validation)?;
    let kind = target.resource.kind;
    let ns = namespace_of(target).unwrap_or_default();
    if kind.allows_create_on_update() && sub.is_none() && state.store.get(kind, ns, name).is_none()
    {
        if meta::name(&obj) != name {
            return Err(ApiError::bad_request(
                "the name of the object does not match the name on the URL",
            ));
        }
        let (stored, warnings) =
            lifecycle::create_validated(state, kind, namespace_of(target), obj, validation)?;
        return Ok(ok_json(StatusCode::CREATED, &stored, &warnings));
    }
    let stored = write(state, target, name, sub, |_| Ok(obj))?;
    Ok(ok_json(StatusCode::OK, &stored, &warnings))
}

fn with_type(target: &Target, mut obj: Value) -> Value {
    if obj.is_object() {
        obj["apiVersion"] = json!(target.resource.api_version());
        obj["kind"] = json!(target.resource.kind_name);
    }
    obj
}

pub fn patch(
    state: &Arc<ClusterState>,
    target: &Target,
    name: &str,
    sub: Option<&str>,
    params: &Params,
    content_type: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let kind = patch::PatchKind::from_content_type(content_type)
        .ok_or_else(|| ApiError::new(415, "UnsupportedMediaType", format!("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {content_type})")))?;
    let document = if kind == patch::PatchKind::Apply {
        parse_body(body)?
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("the patch is not valid JSON: {e}")))?
    };
    let ns = namespace_of(target).unwrap_or_default();
    if kind == patch::PatchKind::Apply && state.store.get(target.resource.kind, ns, name).is_none()
    {
        // Server-side apply creates what is not there yet.
        let validation = FieldValidation::parse(param(params, "fieldValidation"));
        let (stored, warnings) = lifecycle::create_validated(
            state,
            target.resource.kind,
            namespace_of(target),
            document,
            validation,
        )?;
        return Ok(ok_json(StatusCode::CREATED, &stored, &warnings));
    }
    let validation = FieldValidation::parse(param(params, "fieldValidation"));
    let resource = target.resource;
    let mut warnings = Vec::new();
    let stored = write(state, target, name, sub, |current| {
        let mut next = patch::apply(kind, current, &document).map_err(ApiError::bad_request)?;
        // A patch does not carry a version unless it says so.
        if document.pointer("/metadata/resourceVersion").is_none()
            && let Some(m) = next["metadata"].as_object_mut()
        {
            m.remove("resourceVersion");
        }
        warnings = admission::check_schema(resource, &next, validation)?;
        if next.pointer("/metadata/resourceVersion").is_none() {
            next["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
        }
        Ok(next)
    })?;
    Ok(ok_json(StatusCode::OK, &stored, &warnings))
}

fn delete_options(params: &Params, body: &[u8]) -> Result<DeleteOptions, ApiError> {
    let from_body: Value = if body.is_empty() {
        json!({})
    } else {
        parse_body(body)?
    };
    let propagation = param(params, "propagationPolicy")
        .map(String::from)
        .or_else(|| from_body["propagationPolicy"].as_str().map(String::from));
    let propagation = match propagation {
        None => {
            if from_body["orphanDependents"].as_bool() == Some(true) || params.get("orphanDependents").is_some_and(|v| v == "true") {
                Propagation::Orphan
            } else {
                Propagation::Default
            }
        }
        Some(p) => Propagation::parse(&p).ok_or_else(|| ApiError::bad_request(format!("propagationPolicy: Unsupported value: \"{p}\": supported values: \"Foreground\", \"Background\", \"Orphan\"")))?,
    };
    let grace_seconds = param(params, "gracePeriodSeconds")
        .and_then(|g| g.parse().ok())
        .or_else(|| from_body["gracePeriodSeconds"].as_u64());
    Ok(DeleteOptions {
        propagation,
        grace_seconds,
        precondition_uid: from_body
            .pointer("/preconditions/uid")
            .and_then(Value::as_str)
            .map(String::from),
        precondition_rv: from_body
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(String::from),
    })
}

pub fn delete(
    state: &Arc<ClusterState>,
    target: &Target,
    name: &str,
    params: &Params,
    body: &[u8],
) -> Result<Response, ApiError> {
    let opts = delete_options(params, body)?;
    let ns = namespace_of(target).unwrap_or_default();
    if dry_run(params) {
        return Ok(ok_json(StatusCode::OK, &*fetch(state, target, name)?, &[]));
    }
    let obj = lifecycle::delete(state, target.resource.kind, ns, name, &opts)?;
    let status = if meta::is_deleting(&obj) {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok(ok_json(status, &obj, &[]))
}

pub fn delete_collection(
    state: &Arc<ClusterState>,
    target: &Target,
    params: &Params,
    body: &[u8],
) -> Result<Response, ApiError> {
    let opts = delete_options(params, body)?;
    let filter = Filter::from_params(params)?;
    let (items, rv) = state
        .store
        .list(target.resource.kind, namespace_of(target), |o| {
            filter.matches(o)
        });
    let mut deleted = Vec::new();
    for item in &items {
        if let Ok(obj) = lifecycle::delete(
            state,
            target.resource.kind,
            meta::namespace(item),
            meta::name(item),
            &opts,
        ) {
            deleted.push(obj);
        }
    }
    let body = json!({
        "kind": format!("{}List", target.resource.kind_name),
        "apiVersion": target.resource.api_version(),
        "metadata": {"resourceVersion": rv.to_string()},
        "items": deleted.iter().map(|o| o.as_ref()).collect::<Vec<_>>(),
    });
    Ok(ok_json(StatusCode::OK, &body, &[]))
}
