//! Ends no Gantry saw: with no engine running during a run, the pods Kubernetes replaced may be
//! gone (a preempted pod is collected with its node). What is left to read them by is the Job
//! controller's own record — its `SuccessfulCreate` Events, kept by the cluster for about an hour,
//! name every pod it made — and its counts: a pod it made that is neither here, nor recorded,
//! nor counted as failed or succeeded was a failure its `podFailurePolicy` ignored, which with
//! Gantry's policy means Kubernetes disrupted it. Such ends are said to be partial: the Events
//! may have expired, and times and costs are not known.

use crate::k8s::status::{AttemptSummary, EventSummary, PodSummary};
use crate::vocabulary::ends::{Class, PodEnd};

/// Ends read back for one attempt, and how many gone pods could not be explained.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inferred {
    pub ends: Vec<PodEnd>,
    /// Gone pods whose end cannot be told apart from the Job's counts.
    pub unexplained: usize,
}

/// The pods the Job controller says it created for `job`, oldest first.
pub fn created_pods(events: &[EventSummary], job: &str) -> Vec<String> {
    let mut created: Vec<(&Option<jiff::Timestamp>, String)> = events
        .iter()
        .filter(|e| e.kind == "Job" && e.object == job && e.reason == "SuccessfulCreate")
        .filter_map(|e| {
            let pod = e.message.strip_prefix("Created pod: ")?.trim();
            crate::names::is_rfc1123_subdomain(pod).then(|| (&e.last_seen, pod.to_string()))
        })
        .collect();
    created.sort();
    created.dedup_by(|a, b| a.1 == b.1);
    created.into_iter().map(|(_, pod)| pod).collect()
}

/// The ends of `attempt`'s pods that are neither in `live` nor in `recorded`, as far as its
/// counts and `created` tell them.
pub fn infer(
    attempt: &AttemptSummary,
    created: &[String],
    live: &[PodSummary],
    recorded: &[PodEnd],
) -> Inferred {
    let gone: Vec<&String> = created
        .iter()
        .filter(|pod| !live.iter().any(|p| &p.name == *pod))
        .filter(|pod| !recorded.iter().any(|e| &e.pod == *pod))
        .collect();
    if gone.is_empty() {
        return Inferred::default();
    }
    let counted = |class_is: &dyn Fn(Class) -> bool| {
        let seen_live = live
            .iter()
            .filter_map(|p| p.fate.as_ref())
            .filter(|f| class_is(f.class))
            .count();
        let seen_recorded = recorded.iter().filter(|e| class_is(e.class)).count();
        seen_live + seen_recorded
    };
    let failed_unseen = usize::try_from(attempt.failed)
        .unwrap_or(0)
        .saturating_sub(counted(&|c| {
            !matches!(c, Class::Succeeded | Class::Preempted | Class::ConfigError)
        }));
    let succeeded_unseen = usize::try_from(attempt.succeeded)
        .unwrap_or(0)
        .saturating_sub(counted(&|c| c == Class::Succeeded));
    // Gantry suspended it: the pods the Job controller stopped were not its to count.
    if let Some(how) = super::stopped_by_gantry(attempt) {
        let ends = gone.into_iter().map(|pod| PodEnd {
            pod: pod.clone(),
            index: None,
            class: Class::Deleted,
            detail: format!("{how}; gone before any Gantry saw it end"),
            at: None,
            node: None,
            ran_seconds: 0,
            cost: None,
        });
        return Inferred {
            ends: ends.collect(),
            unexplained: 0,
        };
    }
    if !attempt.ignores_disruptions || failed_unseen + succeeded_unseen > 0 {
        return Inferred {
            ends: Vec::new(),
            unexplained: gone.len(),
        };
    }
    let ends = gone
        .into_iter()
        .map(|pod| PodEnd {
            pod: pod.clone(),
            index: None,
            class: Class::Preempted,
            detail: "gone before any Gantry saw it end; Kubernetes did not count it as a failure (DisruptionTarget)".into(),
            at: None,
            node: None,
            ran_seconds: 0,
            cost: None,
        })
        .collect();
    Inferred {
        ends,
        unexplained: 0,
    }
}
