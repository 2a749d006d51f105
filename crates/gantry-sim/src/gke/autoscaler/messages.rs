//! What the cluster autoscaler says, word for word as GKE's does, so that whoever reads the
//! events (kubectl, Gantry's diagnosis) reads what a real cluster would show.
//!
//! Sources: kubernetes/autoscaler `cluster-autoscaler/processors/status/
//! eventing_scale_up_processor.go` (`pod triggered scale-up: %v` over `ScaleUpInfo`s, each
//! `{%v %v->%v (max: %v)}` of the group's id, current, new and maximum size; `pod didn't trigger
//! scale-up: %s` over "%d %s" counts of reasons per node group, joined by ", "),
//! `core/scaleup/orchestrator/skippedreasons.go` ("max node group size reached", "in backoff
//! after failed scale-up"), `core/scaledown/actuation/actuator.go` (`ScaleDown`, "marked the node
//! as toBeDeleted/unschedulable"), and GKE's own `pkg/events` failed scale-up logger, as public
//! copies of it show ("Node scale up in zones %v associated with this pod failed: %v. Pod is at
//! risk of not being scheduled.", cut at 250 characters).

/// The component every autoscaler event is from.
pub const COMPONENT: &str = "cluster-autoscaler";

pub const MAX_REACHED: &str = "max node group size reached";
pub const IN_BACKOFF: &str = "in backoff after failed scale-up";
pub const SCALE_DOWN: &str = "marked the node as toBeDeleted/unschedulable";

/// One node group's growth, as `ScaleUpInfo.String()` prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleUpInfo {
    /// The group's id: its instance group's URL on GKE.
    pub group: String,
    pub current: u64,
    pub new: u64,
    pub max: u64,
}

/// `TriggeredScaleUp`: Go prints the slice of infos as `[{…} {…}]`.
pub fn triggered(infos: &[ScaleUpInfo]) -> String {
    let infos: Vec<String> = infos
        .iter()
        .map(|i| format!("{{{} {}->{} (max: {})}}", i.group, i.current, i.new, i.max))
        .collect();
    format!("pod triggered scale-up: [{}]", infos.join(" "))
}

/// `NotTriggerScaleUp`: each reason with the number of node groups that gave it. (The
/// autoscaler walks a Go map, so its order varies; here it is the order the reasons came in.)
pub fn not_triggered(reasons: &[(String, usize)]) -> String {
    let reasons: Vec<String> = reasons
        .iter()
        .map(|(reason, count)| format!("{count} {reason}"))
        .collect();
    format!("pod didn't trigger scale-up: {}", reasons.join(", "))
}

/// `FailedScaleUp`, on the pods whose scale-up Compute Engine refused.
pub fn failed_scale_up(zones: &[&str], reason: &str) -> String {
    let message = format!(
        "Node scale up in zones {} associated with this pod failed: {reason}. Pod is at risk of \
         not being scheduled.",
        zones.join(", ")
    );
    match message.char_indices().nth(250) {
        Some((cut, _)) => message[..cut].to_string(),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scale_up_is_printed_as_go_prints_its_infos() {
        let info = ScaleUpInfo {
            group: "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/instanceGroups/gke-c-gpu-pool-1234abcd-grp".into(),
            current: 0,
            new: 1,
            max: 1,
        };
        assert_eq!(
            triggered(&[info]),
            "pod triggered scale-up: [{https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/instanceGroups/gke-c-gpu-pool-1234abcd-grp 0->1 (max: 1)}]"
        );
    }

    #[test]
    fn reasons_are_counted_by_node_group() {
        let reasons = [
            (MAX_REACHED.to_string(), 1),
            (
                "node(s) didn't match Pod's node affinity/selector".to_string(),
                2,
            ),
        ];
        assert_eq!(
            not_triggered(&reasons),
            "pod didn't trigger scale-up: 1 max node group size reached, 2 node(s) didn't match \
             Pod's node affinity/selector"
        );
    }

    #[test]
    fn a_failed_scale_up_names_the_zones_and_the_cause() {
        assert_eq!(
            failed_scale_up(&["us-central1-a"], "GCE quota exceeded"),
            "Node scale up in zones us-central1-a associated with this pod failed: GCE quota \
             exceeded. Pod is at risk of not being scheduled."
        );
    }
}
