//! The Job's pods: made from its template (with an Indexed Job's index as annotation, label,
//! hostname and `JOB_COMPLETION_INDEX`), up to `parallelism` and the completions still wanted,
//! and reported as `SuccessfulCreate` or `FailedCreate`.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Value, json};

use super::Tracked;
use crate::kube::cluster::ClusterState;
use crate::kube::events::EventType;
use crate::kube::lifecycle;
use crate::kube::meta;
use crate::kube::resources::Kind;

pub(super) const INDEX_ANNOTATION: &str = "batch.kubernetes.io/job-completion-index";

#[allow(clippy::too_many_arguments)]
pub(super) fn create_pods(
    state: &ClusterState,
    job: &Value,
    active: &[&Arc<Value>],
    t: &Tracked,
    indexed: bool,
    completions: Option<u64>,
    parallelism: u64,
) -> usize {
    let active_n = active.len() as u64;
    let mut to_create: Vec<Option<u64>> = Vec::new();
    if indexed {
        let running: HashSet<u64> = active
            .iter()
            .filter_map(|p| meta::annotation(p, INDEX_ANNOTATION).and_then(|s| s.parse().ok()))
            .collect();
        let room = parallelism.saturating_sub(active_n);
        to_create = (0..completions.unwrap_or(0))
            .filter(|i| !t.succeeded_indexes.contains(i) && !running.contains(i))
            .take(room as usize)
            .map(Some)
            .collect();
    } else {
        let remaining = completions.map_or(parallelism, |c| c.saturating_sub(t.succeeded));
        let want = parallelism.min(remaining).saturating_sub(active_n);
        to_create.resize(want as usize, None);
    }
    let mut created = 0;
    for index in to_create {
        let pod = pod_from_template(job, index);
        match lifecycle::create(state, Kind::Pod, Some(meta::namespace(job)), pod) {
            Ok(p) => {
                created += 1;
                state.events.record(
                    &state.store,
                    job,
                    EventType::Normal,
                    "SuccessfulCreate",
                    &format!("Created pod: {}", meta::name(&p)),
                    "job-controller",
                );
            }
            Err(e) => {
                state.events.record(
                    &state.store,
                    job,
                    EventType::Warning,
                    "FailedCreate",
                    &format!("Error creating: {}", e.message),
                    "job-controller",
                );
            }
        }
    }
    created
}

fn pod_from_template(job: &Value, index: Option<u64>) -> Value {
    let name = meta::name(job);
    let template = &job["spec"]["template"];
    let mut metadata = template["metadata"].clone();
    if !metadata.is_object() {
        metadata = json!({});
    }
    let mut spec = template["spec"].clone();
    metadata["generateName"] = json!(match index {
        Some(i) => format!("{name}-{i}-"),
        None => format!("{name}-"),
    });
    metadata["ownerReferences"] = json!([meta::owner_reference(job, "batch/v1", "Job")]);
    if let Some(m) = metadata.as_object_mut() {
        m.remove("name");
    }
    if let Some(i) = index {
        metadata["annotations"][INDEX_ANNOTATION] = json!(i.to_string());
        metadata["labels"][INDEX_ANNOTATION] = json!(i.to_string());
        spec["hostname"] = json!(format!("{name}-{i}"));
        if let Some(containers) = spec["containers"].as_array_mut() {
            for c in containers {
                if !c["env"].is_array() {
                    c["env"] = json!([]);
                }
                if let Some(env) = c["env"].as_array_mut() {
                    env.push(json!({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": format!("metadata.annotations['{INDEX_ANNOTATION}']")}}}));
                }
            }
        }
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
}
