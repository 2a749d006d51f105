//! One annotation of a Job that several engines may write at once (the pods' ends, the run's
//! cost): read the Job, change the annotation, write it back with the resourceVersion read —
//! the API server answers 409 to a write made in between — and on 409 read and change again.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, PostParams};

use super::status_code;

/// Writes in between tolerated before giving up.
const TRIES: usize = 5;

/// Sets the annotation `key` of Job `job` to what `change` makes of the Job's annotations:
/// `Some((value, outcome))` to write it, None when there is nothing to write. None when the Job
/// is gone or nothing was written; `what` names the write in errors ("recording pod ends").
pub async fn update<T>(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    key: &str,
    what: &str,
    mut change: impl FnMut(Option<&BTreeMap<String, String>>) -> Option<(String, T)>,
) -> Result<Option<T>, String> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    for _ in 0..TRIES {
        let Some(mut current) = jobs
            .get_opt(job)
            .await
            .map_err(|e| format!("reading Job {job}: {e}"))?
        else {
            return Ok(None);
        };
        let Some((value, outcome)) = change(current.metadata.annotations.as_ref()) else {
            return Ok(None);
        };
        current
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(key.into(), value);
        match jobs.replace(job, &PostParams::default(), &current).await {
            Ok(_) => return Ok(Some(outcome)),
            Err(e) if status_code(&e) == Some(409) => continue,
            Err(e) if status_code(&e) == Some(404) => return Ok(None),
            Err(e) => return Err(format!("{what} on Job {job}: {e}")),
        }
    }
    Err(format!(
        "{what} on Job {job}: it changed under every one of {TRIES} writes"
    ))
}
