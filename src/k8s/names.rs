//! Names and labels of what Gantry creates: attempt names, RFC 1123 checks, the labels that let
//! Gantry find (and only ever touch) its own objects.

/// Every object Gantry creates carries `app.kubernetes.io/managed-by=gantry`.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub const MANAGER: &str = "gantry";
/// The training Job's base name (the configured `job.name`), shared by all its attempts.
pub const JOB_LABEL: &str = "gantry.dev/job";
/// Which attempt an object belongs to: 1 for the launch, 2 for the first retry, ...
pub const ATTEMPT_LABEL: &str = "gantry.dev/attempt";
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

/// An RFC 1123 label: 1 to 63 lower-case letters, digits or '-', alphanumeric at both ends.
pub fn is_rfc1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// An RFC 1035 label (what a Service name must be): an RFC 1123 label starting with a letter.
pub fn is_rfc1035_label(s: &str) -> bool {
    is_rfc1123_label(s) && s.as_bytes()[0].is_ascii_lowercase()
}

/// An RFC 1123 subdomain: dot-separated labels, at most 253 characters.
pub fn is_rfc1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_rfc1123_label)
}

/// A name the kubelet accepts for an environment variable.
pub fn is_env_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && !b[0].is_ascii_digit()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
}

/// A label value: at most 63 characters, alphanumeric at both ends, `-_.` inside.
pub fn is_label_value(s: &str) -> bool {
    let b = s.as_bytes();
    b.is_empty()
        || (b.len() <= 63
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric())
}

/// A label key (also a node-selector key): a name as `is_label_value` says but not empty,
/// optionally after a DNS subdomain prefix and '/' (`gantry.dev/attempt`).
pub fn is_label_key(s: &str) -> bool {
    let (prefix, name) = match s.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, s),
    };
    prefix.is_none_or(is_rfc1123_subdomain) && !name.is_empty() && is_label_value(name)
}

/// A safe single path component for the log directory (pod, job and cluster names are RFC 1123
/// already; a kubeconfig context name may hold anything).
pub fn path_component(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match cleaned.as_str() {
        "" | "." | ".." => "_".to_string(),
        _ => cleaned,
    }
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

    #[test]
    fn rfc1123() {
        assert!(is_rfc1123_label("ml-training-job"));
        assert!(is_rfc1123_label("0abc"));
        assert!(!is_rfc1123_label("-abc"));
        assert!(!is_rfc1123_label("abc-"));
        assert!(!is_rfc1123_label("Abc"));
        assert!(!is_rfc1123_label(&"a".repeat(64)));
        assert!(!is_rfc1035_label("0abc"));
        assert!(is_rfc1123_subdomain("a.b-c.d"));
        assert!(!is_rfc1123_subdomain("a..b"));
    }

    #[test]
    fn env_and_label_values() {
        assert!(is_env_name("SIM_FAIL_ATTEMPTS"));
        assert!(!is_env_name("1X"));
        assert!(!is_env_name("A B"));
        assert!(is_label_value("ml-training"));
        assert!(!is_label_value("-x"));
        assert_eq!(path_component("gke_p_l/c"), "gke_p_l_c");
        assert_eq!(path_component(".."), "_");
    }

    #[test]
    fn label_keys_as_the_api_server_takes_them() {
        for good in [
            "job",
            "team_name",
            "a.b-c",
            "example.com/team",
            "gantry.dev/attempt",
            "x",
        ] {
            assert!(is_label_key(good), "{good}");
        }
        let long = "a".repeat(64);
        for bad in [
            "",
            "team name",
            "-x",
            "x-",
            "/x",
            "example.com/",
            "Example.com/x",
            "a/b/c",
            long.as_str(),
        ] {
            assert!(!is_label_key(bad), "{bad}");
        }
    }
}
