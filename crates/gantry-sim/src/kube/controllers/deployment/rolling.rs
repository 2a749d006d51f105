//! How many pods each ReplicaSet of a Deployment should have, step by step, as
//! `rolling.go`, `recreate.go` and `deployment_util.go` decide: a RollingUpdate scales the new
//! ReplicaSet up within `maxSurge` pods over the desired count and the old ones down while no
//! more than `maxUnavailable` pods are unavailable (surge rounded up, unavailability down, and
//! never both zero); a Recreate scales the old ones to zero and starts the new one once their
//! pods are gone.

use serde_json::{Value, json};

use super::{DESIRED_REPLICAS, MAX_REPLICAS, scaling_event};
use crate::kube::apps::int_or_percent;
use crate::kube::cluster::ClusterState;
use crate::kube::meta;
use crate::kube::resources::Kind;
use crate::kube::store::Obj;

fn desired(d: &Value) -> i64 {
    d["spec"]["replicas"].as_i64().unwrap_or(1)
}

fn spec_replicas(rs: &Value) -> i64 {
    rs["spec"]["replicas"].as_i64().unwrap_or(0)
}

fn available(rs: &Value) -> i64 {
    rs["status"]["availableReplicas"].as_i64().unwrap_or(0)
}

fn is_rolling(d: &Value) -> bool {
    d["spec"]["strategy"]["type"] != "Recreate"
}

/// `ResolveFenceposts`: surge rounded up, unavailability rounded down, 1 unavailable when both
/// come to zero.
fn fenceposts(d: &Value) -> (i64, i64) {
    let rolling = &d["spec"]["strategy"]["rollingUpdate"];
    let total = desired(d);
    let scaled =
        |key: &str, up: bool| int_or_percent(&rolling[key]).map_or(0, |v| v.scaled(total, up));
    let surge = scaled("maxSurge", true);
    let unavailable = scaled("maxUnavailable", false);
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

/// `MaxUnavailable`.
pub fn max_unavailable(d: &Value) -> i64 {
    if !is_rolling(d) || desired(d) == 0 {
        return 0;
    }
    fenceposts(d).1.min(desired(d))
}

/// `MaxSurge`.
fn max_surge(d: &Value) -> i64 {
    if is_rolling(d) { fenceposts(d).0 } else { 0 }
}

/// `SetReplicasAnnotations`: what the Deployment wanted when it last sized this ReplicaSet.
pub fn replica_annotations(d: &Value, annotations: &mut Value) {
    annotations[DESIRED_REPLICAS] = json!(desired(d).to_string());
    annotations[MAX_REPLICAS] = json!((desired(d) + max_surge(d)).to_string());
}

/// `NewRSNewReplicas` for a ReplicaSet about to be made.
pub fn initial_replicas(d: &Value, old: &[Obj]) -> i64 {
    new_replicas(d, old, 0)
}

fn new_replicas(d: &Value, old: &[Obj], new_spec: i64) -> i64 {
    if !is_rolling(d) {
        return desired(d);
    }
    let surge = int_or_percent(&d["spec"]["strategy"]["rollingUpdate"]["maxSurge"])
        .map_or(0, |v| v.scaled(desired(d), true));
    let current: i64 = old.iter().map(|rs| spec_replicas(rs)).sum::<i64>() + new_spec;
    let max_total = desired(d) + surge;
    if current >= max_total {
        return new_spec;
    }
    new_spec + (max_total - current).min(desired(d) - new_spec)
}

/// One step of the rollout; whether any ReplicaSet was resized.
pub fn scale(state: &ClusterState, d: &Value, new_rs: &Obj, old: &[Obj]) -> bool {
    if !is_rolling(d) {
        return recreate(state, d, new_rs, old);
    }
    let new_spec = spec_replicas(new_rs);
    let want = desired(d);
    if new_spec > want {
        return resize(state, d, new_rs, want);
    }
    if new_spec < want && resize(state, d, new_rs, new_replicas(d, old, new_spec)) {
        return true;
    }
    scale_down_old(state, d, new_rs, old)
}

fn recreate(state: &ClusterState, d: &Value, new_rs: &Obj, old: &[Obj]) -> bool {
    let mut scaled = false;
    for rs in old.iter().filter(|rs| spec_replicas(rs) > 0) {
        scaled |= resize(state, d, rs, 0);
    }
    let old_pods_left = old
        .iter()
        .any(|rs| rs["status"]["replicas"].as_i64().unwrap_or(0) > 0);
    if scaled || old_pods_left {
        return scaled;
    }
    resize(state, d, new_rs, desired(d))
}

/// `reconcileOldReplicaSets`: unhealthy old pods go first, then healthy ones while enough
/// pods stay available.
fn scale_down_old(state: &ClusterState, d: &Value, new_rs: &Obj, old: &[Obj]) -> bool {
    let mut old: Vec<(Obj, i64)> = old
        .iter()
        .filter(|rs| spec_replicas(rs) > 0)
        .map(|rs| (rs.clone(), spec_replicas(rs)))
        .collect();
    if old.is_empty() {
        return false;
    }
    old.sort_by(|a, b| {
        let created = |rs: &Obj| {
            rs["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        created(&a.0).cmp(&created(&b.0))
    });
    let all_pods: i64 = old.iter().map(|(_, n)| n).sum::<i64>() + spec_replicas(new_rs);
    let min_available = desired(d) - max_unavailable(d);
    let new_unavailable = spec_replicas(new_rs) - available(new_rs);
    let max_scaled_down = all_pods - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return false;
    }
    let mut scaled_down = 0;
    for (rs, spec) in old.iter_mut() {
        if scaled_down >= max_scaled_down {
            break;
        }
        let unhealthy = *spec - available(rs);
        if unhealthy <= 0 {
            continue;
        }
        let step = (max_scaled_down - scaled_down).min(unhealthy);
        *spec -= step;
        resize(state, d, rs, *spec);
        scaled_down += step;
    }
    let available_pods: i64 =
        old.iter().map(|(rs, _)| available(rs)).sum::<i64>() + available(new_rs);
    if available_pods > min_available {
        let to_scale_down = available_pods - min_available;
        let mut done = 0;
        for (rs, spec) in old.iter_mut() {
            if done >= to_scale_down {
                break;
            }
            if *spec == 0 {
                continue;
            }
            let step = (*spec).min(to_scale_down - done);
            *spec -= step;
            resize(state, d, rs, *spec);
            done += step;
        }
        scaled_down += done;
    }
    scaled_down > 0
}

/// `scaleReplicaSetAndRecordEvent`: sets the ReplicaSet's replicas and the annotations saying
/// what the Deployment wanted; whether the count changed.
fn resize(state: &ClusterState, d: &Value, rs: &Obj, replicas: i64) -> bool {
    let from = spec_replicas(rs);
    let updated = state
        .store
        .update(Kind::ReplicaSet, meta::namespace(rs), meta::name(rs), |r| {
            r["spec"]["replicas"] = json!(replicas);
            let mut annotations = r["metadata"]["annotations"].clone();
            if !annotations.is_object() {
                annotations = json!({});
            }
            replica_annotations(d, &mut annotations);
            r["metadata"]["annotations"] = annotations;
            if from != replicas {
                let generation = r["metadata"]["generation"].as_u64().unwrap_or(1) + 1;
                r["metadata"]["generation"] = json!(generation);
            }
        });
    if updated.is_err() || from == replicas {
        return false;
    }
    let direction = if from < replicas { "up" } else { "down" };
    let message = format!(
        "Scaled {direction} replica set {} from {from} to {replicas}",
        meta::name(rs)
    );
    scaling_event(state, d, &message);
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn deployment(replicas: i64, surge: Value, unavailable: Value) -> Value {
        json!({"spec": {"replicas": replicas, "strategy": {"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}}})
    }

    fn rs(replicas: i64) -> Obj {
        Arc::new(json!({"spec": {"replicas": replicas}}))
    }

    #[test]
    fn the_default_quarters_round_surge_up_and_unavailability_down() {
        let two = deployment(2, json!("25%"), json!("25%"));
        assert_eq!((max_surge(&two), max_unavailable(&two)), (1, 0));
        let ten = deployment(10, json!("25%"), json!("25%"));
        assert_eq!((max_surge(&ten), max_unavailable(&ten)), (3, 2));
        let neither = deployment(3, json!(0), json!("10%"));
        assert_eq!((max_surge(&neither), max_unavailable(&neither)), (0, 1));
    }

    #[test]
    fn a_new_replica_set_starts_within_the_surge() {
        let d = deployment(2, json!("25%"), json!("25%"));
        assert_eq!(initial_replicas(&d, &[]), 2, "nothing old: all at once");
        assert_eq!(initial_replicas(&d, &[rs(2)]), 1, "one over the two wanted");
        assert_eq!(new_replicas(&d, &[rs(1)], 1), 2);
        assert_eq!(new_replicas(&d, &[rs(2)], 1), 1, "at the surge already");
    }
}
