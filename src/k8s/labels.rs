//! Names, labels and annotations of what Gantry creates and reads: attempt names, the labels
//! that let Gantry find (and only ever touch) its own objects, what it records on its Jobs, and
//! GKE's node labels a Job selects. (What names the API server accepts is `crate::names`.)

/// Every object Gantry creates carries `app.kubernetes.io/managed-by=gantry`.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub const MANAGER: &str = "gantry";
/// The training Job's base name (the configured `job.name`), shared by all its attempts.
pub const JOB_LABEL: &str = "gantry.dev/job";
/// Which attempt an object belongs to: 1 for the launch, 2 for the first retry, ...
pub const ATTEMPT_LABEL: &str = "gantry.dev/attempt";
/// Written on a pod or an attempt just before Gantry deletes it: who asked (a principal's name).
pub const DELETED_BY: &str = "gantry.dev/deleted-by";
/// The ends of an attempt's pods, recorded on its Job (`vocabulary::ends::PodEnd`, a JSON list).
pub const POD_ENDS: &str = "gantry.dev/pod-ends";
/// The run's cost, recorded on its newest attempt (`vocabulary::cost::Recorded`).
pub const COST: &str = "gantry.dev/cost";
/// Written on an attempt whose run Gantry ended: why.
pub const RUN_ENDED: &str = "gantry.dev/run-ended";
/// Written on an attempt Gantry ended: why, in one word (`vocabulary::attempt::EndedBy`).
pub const ENDED_BY: &str = "gantry.dev/ended-by";
/// Written on an attempt a recovery replaced: why, by whom, when, and what followed it
/// (`vocabulary::attempt::Recovered`, JSON).
pub const RECOVERED: &str = "gantry.dev/recovered";
/// The node label GKE puts on every node with its pool's name: what an attempt selects.
pub const POOL_LABEL: &str = "cloud.google.com/gke-nodepool";
/// The node label GKE puts on spot nodes, which a Job may select.
pub const SPOT_LABEL: &str = "cloud.google.com/gke-spot";
/// Set by the Job controller on every pod of a Job.
pub const POD_JOB_NAME_LABEL: &str = "job-name";
/// Set by the Job controller on every pod of an Indexed Job.
pub const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// The Job name of an attempt: `<job>` for the first, then `<job>-2`, `<job>-3`, ...
pub fn attempt_name(job: &str, attempt: u32) -> String {
    if attempt <= 1 {
        job.to_string()
    } else {
        format!("{job}-{attempt}")
    }
}

/// The label selector of every object Gantry made for a training Job (all attempts).
pub fn managed_selector(job: &str) -> String {
    format!("{MANAGED_BY}={MANAGER},{JOB_LABEL}={job}")
}

/// The label selector of one attempt's objects.
pub fn attempt_selector(job: &str, attempt: u32) -> String {
    format!("{},{ATTEMPT_LABEL}={attempt}", managed_selector(job))
}

/// The pods of one attempt's Job, as the Job controller labels them.
pub fn pods_of_job_selector(job_name: &str) -> String {
    format!("{POD_JOB_NAME_LABEL}={job_name}")
}

/// Who deleted an object through Gantry (the `gantry.dev/deleted-by` annotation it wrote first).
pub fn deleted_by(meta: &kube::api::ObjectMeta) -> Option<String> {
    meta.annotations
        .as_ref()?
        .get(DELETED_BY)
        .map(|by| crate::sanitize::one_line(by))
}

/// Gantry's attempt number on an object (`gantry.dev/attempt`).
pub fn attempt_of(meta: &kube::api::ObjectMeta) -> Option<u32> {
    meta.labels.as_ref()?.get(ATTEMPT_LABEL)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_are_numbered_after_the_first() {
        assert_eq!(attempt_name("ml-training-job", 1), "ml-training-job");
        assert_eq!(attempt_name("ml-training-job", 2), "ml-training-job-2");
        assert_eq!(attempt_name("ml-training-job", 13), "ml-training-job-13");
    }
}
