//! What the API server would refuse in a Job, said before anything is sent.

use k8s_openapi::api::batch::v1::Job;

use super::{ManifestError, invalid};
use crate::names;

/// What the API server would refuse, said before anything is sent.
pub fn validate(job: &Job) -> Result<(), ManifestError> {
    let name = job.metadata.name.as_deref().unwrap_or_default();
    // The Job controller puts the name in a label value on every pod: 63 characters at most.
    if !names::is_rfc1123_label(name) {
        return Err(invalid(format!(
            "job name \"{name}\": use 1 to 63 lower-case letters, digits and '-' (RFC 1123), starting and ending with a letter or digit"
        )));
    }
    if let Some(ns) = &job.metadata.namespace
        && !names::is_rfc1123_label(ns)
    {
        return Err(invalid(format!(
            "namespace \"{ns}\" is not an RFC 1123 label"
        )));
    }
    for (k, v) in job.metadata.labels.iter().flatten() {
        check_label("label", k, v)?;
    }
    let spec = job
        .spec
        .as_ref()
        .ok_or_else(|| invalid("the Job has no spec"))?;
    let indexed = spec.completion_mode.as_deref() == Some("Indexed");
    if indexed {
        let workers = spec.completions.unwrap_or(0);
        if workers < 1 {
            return Err(invalid("an Indexed Job needs completions of 1 or more"));
        }
        let last = format!("{name}-{}", workers - 1);
        if !names::is_rfc1123_label(&last) {
            return Err(invalid(format!(
                "job name \"{name}\" is too long for an Indexed Job: pod hostnames such as \"{last}\" must be at most 63 characters"
            )));
        }
    }
    for (field, n) in [
        ("parallelism", spec.parallelism),
        ("completions", spec.completions),
    ] {
        if n.is_some_and(|n| n < 0) {
            return Err(invalid(format!("{field} must not be negative")));
        }
    }
    let pod = spec
        .template
        .spec
        .as_ref()
        .ok_or_else(|| invalid("the Job has no pod template"))?;
    for (k, v) in pod.node_selector.iter().flatten() {
        check_label("node selector", k, v)?;
    }
    if !matches!(pod.restart_policy.as_deref(), Some("Never" | "OnFailure")) {
        return Err(invalid("a Job's restartPolicy must be Never or OnFailure"));
    }
    if spec.pod_failure_policy.is_some() && pod.restart_policy.as_deref() != Some("Never") {
        return Err(invalid(
            "spec.podFailurePolicy needs restartPolicy: Never (the API server refuses it with OnFailure): remove the policy, or restart Never",
        ));
    }
    if let Some(sub) = &pod.subdomain
        && !names::is_rfc1123_label(sub)
    {
        return Err(invalid(format!(
            "subdomain \"{sub}\" is not an RFC 1123 label"
        )));
    }
    if pod.containers.is_empty() {
        return Err(invalid("the pod template has no container"));
    }
    for c in &pod.containers {
        if !names::is_rfc1123_label(&c.name) {
            return Err(invalid(format!(
                "container name \"{}\" is not an RFC 1123 label",
                c.name
            )));
        }
        let image = c.image.as_deref().unwrap_or_default();
        if image.is_empty() || image.chars().any(char::is_whitespace) {
            return Err(invalid(format!(
                "container image \"{image}\" is not an image reference"
            )));
        }
        for e in c.env.iter().flatten() {
            if !names::is_env_name(&e.name) {
                return Err(invalid(format!(
                    "environment variable \"{}\": use letters, digits, '_', '-' or '.', not starting with a digit",
                    e.name
                )));
            }
        }
        if let Some(r) = &c.resources {
            for (k, q) in r.requests.iter().chain(r.limits.iter()).flatten() {
                if !is_quantity(&q.0) {
                    return Err(invalid(format!(
                        "resource {k} = \"{}\" is not a quantity (e.g. 500m, 2, 8Gi)",
                        q.0
                    )));
                }
            }
        }
    }
    Ok(())
}

/// A Kubernetes quantity: a decimal number with an optional SI, binary or exponent suffix.
pub fn is_quantity(s: &str) -> bool {
    let digits_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(digits_end);
    let number_ok = !number.is_empty()
        && number.matches('.').count() <= 1
        && number.chars().any(|c| c.is_ascii_digit());
    let suffix_ok = matches!(
        suffix,
        "" | "m" | "k" | "M" | "G" | "T" | "P" | "E" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"
    ) || suffix.strip_prefix(['e', 'E']).is_some_and(|exp| {
        let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        !exp.is_empty() && exp.chars().all(|c| c.is_ascii_digit())
    });
    number_ok && suffix_ok
}

/// A label (or node-selector) pair the API server accepts.
fn check_label(what: &str, key: &str, value: &str) -> Result<(), ManifestError> {
    if !names::is_label_key(key) {
        return Err(invalid(format!(
            "{what} key \"{key}\": use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, optionally after a DNS prefix and '/' (example.com/team)"
        )));
    }
    if !names::is_label_value(value) {
        return Err(invalid(format!(
            "{what} {key}={value}: a value is empty or at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
        )));
    }
    Ok(())
}
