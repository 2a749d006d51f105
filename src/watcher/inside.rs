//! The watcher's side, in its pod: where its settings are, and what it can and cannot do from
//! inside — found by asking, never by acting: an access review for every right its RBAC is
//! meant to grant, and a read of its cluster through GKE (what the node pools' acts need). What
//! it found is written to its report ConfigMap, which `gantry watcher status` reads.

use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, PostParams};

use super::rbac::{CLUSTER, NAMESPACED, Rule};
use super::status::{REPORT_KEY, Report, Unavailable};
use crate::config::{Config, ConfigError};

fn env_path(name: &str, default: &str) -> PathBuf {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(default), PathBuf::from)
}

/// The carried settings, as far as this Gantry knows them, and the keys it ignored; the
/// notification targets' URLs read from the Secret's files.
pub fn load() -> Result<(Config, Vec<String>), ConfigError> {
    let path = env_path(
        super::CONFIG_ENV,
        &format!("{}/{}", super::CONFIG_DIR, super::CONFIG_FILE),
    );
    let invalid = |message: String| ConfigError::Invalid {
        path: path.clone(),
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
        path: path.clone(),
        source,
    })?;
    let (config, ignored) = super::carried::read(&text).map_err(invalid)?;
    let config = config
        .with_files_in(&env_path(super::SECRETS_ENV, super::SECRET_DIR))
        .map_err(invalid)?;
    Ok((config, ignored))
}

/// Every right of `rules` this pod's account lacks, as an act and why.
pub async fn lacking(client: &kube::Client, namespace: &str) -> Vec<Unavailable> {
    let mut found: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let scoped = NAMESPACED
        .iter()
        .map(|r| (r, Some(namespace)))
        .chain(CLUSTER.iter().map(|r| (r, None)));
    for (rule, namespace) in scoped {
        for denied in denied(client, rule, namespace).await {
            found.entry(rule.act).or_default().push(denied);
        }
    }
    found
        .into_iter()
        .map(|(act, denied)| Unavailable {
            act: act.to_string(),
            why: format!("forbidden (403): {}", denied.join("; ")),
        })
        .collect()
}

/// What of `rule` the account may not do, in the API server's words.
async fn denied(client: &kube::Client, rule: &Rule, namespace: Option<&str>) -> Vec<String> {
    let reviews: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let mut denied = Vec::new();
    for (verb, group, resource, sub) in rule.grants() {
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    namespace: namespace.map(str::to_string),
                    verb: Some(verb.to_string()),
                    group: Some(group.to_string()),
                    resource: Some(resource.to_string()),
                    subresource: (!sub.is_empty()).then(|| sub.to_string()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let whole = if sub.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}/{sub}")
        };
        let place = namespace.map_or_else(
            || "at the cluster scope".to_string(),
            |n| format!("in the namespace \"{n}\""),
        );
        let said = format!("cannot {verb} resource \"{whole}\" in API group \"{group}\" {place}");
        match reviews.create(&PostParams::default(), &review).await {
            Ok(answer) if answer.status.as_ref().is_some_and(|s| s.allowed) => {}
            Ok(_) => denied.push(said),
            Err(kube::Error::Api(s)) => denied.push(format!("{said} ({})", s.message)),
            Err(e) => denied.push(format!("{said} (not known: {e})")),
        }
    }
    denied
}

/// Writes `report` to the watcher's report ConfigMap (made when missing).
pub async fn write_report(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    report: &Report,
) -> Result<(), String> {
    let name = super::report_name(job);
    let text = serde_json::to_string(report).map_err(|e| e.to_string())?;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let map = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            labels: Some(super::labels(job)),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(REPORT_KEY.to_string(), text)])),
        ..Default::default()
    };
    let result = match maps.get_opt(&name).await {
        Ok(Some(mut there)) => {
            there.data = map.data;
            maps.replace(&name, &PostParams::default(), &there).await
        }
        Ok(None) => maps.create(&PostParams::default(), &map).await,
        Err(e) => Err(e),
    };
    result
        .map(|_| ())
        .map_err(|e| format!("ConfigMap {namespace}/{name}: {e}"))
}

/// The GKE acts, unavailable for `why` (no credential, or GKE refused to read the cluster).
pub fn without_gke(why: &str) -> Vec<Unavailable> {
    super::NEEDS_GKE
        .iter()
        .map(|act| Unavailable {
            act: (*act).to_string(),
            why: why.to_string(),
        })
        .collect()
}
