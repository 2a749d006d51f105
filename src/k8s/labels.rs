//! Names and labels of what Gantry creates: attempt names and the labels that let Gantry find
//! (and only ever touch) its own objects. (What names the API server accepts is `crate::names`.)

/// Every object Gantry creates carries `app.kubernetes.io/managed-by=gantry`.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub const MANAGER: &str = "gantry";
/// The training Job's base name (the configured `job.name`), shared by all its attempts.
pub const JOB_LABEL: &str = "gantry.dev/job";
/// Which attempt an object belongs to: 1 for the launch, 2 for the first retry, ...
pub const ATTEMPT_LABEL: &str = "gantry.dev/attempt";
/// Written on a pod or an attempt just before Gantry deletes it: who asked (a principal's name).
pub const DELETED_BY: &str = "gantry.dev/deleted-by";
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
