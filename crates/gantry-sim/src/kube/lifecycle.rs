//! Creating and deleting objects the way the API server does, for requests and controllers alike:
//! admission on create; graceful pod deletion, propagation policies and finalizers on delete.

use std::sync::Arc;

use serde_json::{Value, json};

use super::admission::{self, FieldValidation, Warnings};
use super::cluster::ClusterState;
use super::errors::ApiError;
use super::meta;
use super::resources::Kind;
use super::store::Obj;

pub fn create(
    state: &ClusterState,
    kind: Kind,
    namespace: Option<&str>,
    obj: Value,
) -> Result<Obj, ApiError> {
    create_validated(state, kind, namespace, obj, FieldValidation::Ignore).map(|(o, _)| o)
}

/// Admits and stores a new object; returns it with any unknown-field warnings.
pub fn create_validated(
    state: &ClusterState,
    kind: Kind,
    namespace: Option<&str>,
    mut obj: Value,
    validation: FieldValidation,
) -> Result<(Obj, Warnings), ApiError> {
    let resource = kind.resource();
    admission::stamp_new(resource, &mut obj, namespace)?;
    let warnings = admission::check_schema(resource, &obj, validation)?;
    admission::check_namespace(&state.store, resource, meta::namespace(&obj))?;
    admission::apply_defaults(resource, &mut obj)?;
    let name = meta::name(&obj).to_string();
    let stored = state
        .store
        .create(kind, obj)
        .map_err(|e| ApiError::from_store(e, resource, &name))?;
    Ok((stored, warnings))
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Propagation {
    /// The kind's default: Orphan for batch/v1 Jobs (kept for compatibility), Background else.
    #[default]
    Default,
    Orphan,
    Background,
    Foreground,
}

impl Propagation {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "Orphan" => Some(Self::Orphan),
            "Background" => Some(Self::Background),
            "Foreground" => Some(Self::Foreground),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeleteOptions {
    pub propagation: Propagation,
    pub grace_seconds: Option<u64>,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
}

const FOREGROUND: &str = "foregroundDeletion";

/// Deletes an object; returns it as it stands after the delete (with deletionTimestamp while a
/// graceful or foreground deletion is under way).
pub fn delete(
    state: &Arc<ClusterState>,
    kind: Kind,
    ns: &str,
    name: &str,
    opts: &DeleteOptions,
) -> Result<Obj, ApiError> {
    let resource = kind.resource();
    let Some(current) = state.store.get(kind, ns, name) else {
        return Err(ApiError::not_found(resource, name));
    };
    if let Some(uid) = &opts.precondition_uid
        && uid != meta::uid(&current)
    {
        return Err(ApiError::new(
            409,
            "Conflict",
            format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                meta::uid(&current)
            ),
        ));
    }
    if let Some(rv) = &opts.precondition_rv
        && Some(rv.as_str())
            != current
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
    {
        return Err(ApiError::conflict(resource, name));
    }
    let now = meta::now();
    match kind {
        Kind::Pod => {
            let grace = opts.grace_seconds.unwrap_or_else(|| {
                current
                    .pointer("/spec/terminationGracePeriodSeconds")
                    .and_then(Value::as_u64)
                    .unwrap_or(30)
            });
            let unscheduled = current
                .pointer("/spec/nodeName")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            let terminal = matches!(
                current.pointer("/status/phase").and_then(Value::as_str),
                Some("Succeeded" | "Failed")
            );
            if grace == 0 || unscheduled || terminal {
                return remove_now(state, kind, ns, name);
            }
            if meta::is_deleting(&current) {
                return Ok(current);
            }
            state
                .store
                .update(kind, ns, name, |p| {
                    p["metadata"]["deletionTimestamp"] = json!(now);
                    p["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
                })
                .map_err(|e| ApiError::from_store(e, resource, name))
        }
        Kind::Namespace => state
            .store
            .update(kind, ns, name, |n| {
                n["metadata"]["deletionTimestamp"] = json!(now);
                n["metadata"]["deletionGracePeriodSeconds"] = json!(0);
                n["status"]["phase"] = json!("Terminating");
            })
            .map_err(|e| ApiError::from_store(e, resource, name)),
        _ => {
            let propagation = match opts.propagation {
                Propagation::Default if kind == Kind::Job => Propagation::Orphan,
                Propagation::Default => Propagation::Background,
                p => p,
            };
            let has_finalizers = current
                .pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty());
            match propagation {
                Propagation::Foreground => state
                    .store
                    .update(kind, ns, name, |o| {
                        o["metadata"]["deletionTimestamp"] = json!(now);
                        o["metadata"]["deletionGracePeriodSeconds"] = json!(0);
                        let mut finalizers: Vec<Value> = o["metadata"]["finalizers"]
                            .as_array()
                            .cloned()
                            .unwrap_or_default();
                        if !finalizers.iter().any(|f| f == FOREGROUND) {
                            finalizers.push(json!(FOREGROUND));
                        }
                        o["metadata"]["finalizers"] = Value::Array(finalizers);
                    })
                    .map_err(|e| ApiError::from_store(e, resource, name)),
                _ if has_finalizers => state
                    .store
                    .update(kind, ns, name, |o| {
                        o["metadata"]["deletionTimestamp"] = json!(now);
                        o["metadata"]["deletionGracePeriodSeconds"] = json!(0);
                    })
                    .map_err(|e| ApiError::from_store(e, resource, name)),
                Propagation::Orphan => {
                    orphan_dependents(state, meta::uid(&current));
                    remove_now(state, kind, ns, name)
                }
                _ => remove_now(state, kind, ns, name),
            }
        }
    }
}

fn remove_now(state: &ClusterState, kind: Kind, ns: &str, name: &str) -> Result<Obj, ApiError> {
    state
        .store
        .remove(kind, ns, name)
        .ok_or_else(|| ApiError::not_found(kind.resource(), name))
}

/// Kinds that can have owners among the objects Gantry's clusters hold.
pub const DEPENDENT_KINDS: &[Kind] = &[
    Kind::Pod,
    Kind::Service,
    Kind::Job,
    Kind::ConfigMap,
    Kind::Secret,
    Kind::Lease,
    Kind::ReplicaSet,
    Kind::Deployment,
];

pub fn dependents(state: &ClusterState, owner_uid: &str) -> Vec<(Kind, Obj)> {
    let mut out = Vec::new();
    for kind in DEPENDENT_KINDS {
        let (objs, _) = state
            .store
            .list(*kind, None, |o| meta::owner_uids(o).contains(&owner_uid));
        out.extend(objs.into_iter().map(|o| (*kind, o)));
    }
    out
}

fn orphan_dependents(state: &ClusterState, owner_uid: &str) {
    for (kind, obj) in dependents(state, owner_uid) {
        let _ = state
            .store
            .update(kind, meta::namespace(&obj), meta::name(&obj), |o| {
                if let Some(refs) = o["metadata"]["ownerReferences"].as_array_mut() {
                    refs.retain(|r| r["uid"].as_str() != Some(owner_uid));
                }
            });
    }
}

/// An object being deleted whose finalizers are all gone is removed for good.
pub fn remove_if_finalized(state: &ClusterState, kind: Kind, obj: &Value) {
    let finalizers_left = obj
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty());
    if meta::is_deleting(obj) && !finalizers_left && kind != Kind::Pod && kind != Kind::Namespace {
        state
            .store
            .remove(kind, meta::namespace(obj), meta::name(obj));
    }
}

pub fn remove_finalizer(state: &ClusterState, kind: Kind, obj: &Value, finalizer: &str) {
    let updated = state
        .store
        .update(kind, meta::namespace(obj), meta::name(obj), |o| {
            if let Some(f) = o["metadata"]["finalizers"].as_array_mut() {
                f.retain(|x| x != finalizer);
            }
        });
    if let Ok(o) = updated {
        remove_if_finalized(state, kind, &o);
    }
}

pub const FOREGROUND_FINALIZER: &str = FOREGROUND;
