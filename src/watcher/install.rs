//! `gantry watcher install`: makes (or brings up to date) every object of the watcher, keeping
//! the SSH host key it already has so that its fingerprint never changes, and says what a
//! Google service account must be granted before the watcher's acts on GKE work (resizing pools,
//! the spot fallback's pool) — printed as the exact `gcloud` commands.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, PostParams};
use kube::{Resource, ResourceExt};
use russh::keys::ssh_key::LineEnding;
use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::keys::{HashAlg, PrivateKey};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::desired::Keys;
use super::error::WatcherError;
use super::objects::{AUTHORIZED_KEYS_FILE, HOST_KEY_FILE, OPERATORS_FILE, Plan};
use crate::k8s::status_code;

/// What install made, and what is left to the operator.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Installed {
    /// `Deployment/gantry-watcher-ml-training-job`, …
    pub objects: Vec<String>,
    /// The SSH server's host key, as `ssh-keygen -lf` prints it (when it serves).
    pub host_key_fingerprint: Option<String>,
    /// Its public key line, for `known_hosts` (`gantry watcher ssh` pins it).
    pub host_key: Option<String>,
}

/// Makes or updates every object of `plan`'s watcher.
pub async fn install(
    client: &kube::Client,
    mut plan: Plan,
    keys: &Keys,
) -> Result<Installed, WatcherError> {
    let desired = super::desired::fingerprint(&plan, keys);
    let ns = plan.namespace.clone();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let name = super::name(&plan.job);
    let kept = secrets
        .get_opt(&name)
        .await
        .map_err(WatcherError::api(format!("reading Secret {name}")))?
        .and_then(|s| s.data)
        .and_then(|d| d.get(HOST_KEY_FILE).cloned())
        .and_then(|b| String::from_utf8(b.0).ok());
    let host = match kept.and_then(|text| PrivateKey::from_openssh(text.as_bytes()).ok()) {
        Some(key) => key,
        None => new_host_key()?,
    };
    let host_text = host
        .to_openssh(LineEnding::LF)
        .map_err(|e| WatcherError::Input(format!("encoding the host key: {e}")))?;
    plan.secrets
        .insert(HOST_KEY_FILE.into(), host_text.to_string());
    plan.secrets
        .insert(AUTHORIZED_KEYS_FILE.into(), keys.authorized.clone());
    plan.secrets
        .insert(OPERATORS_FILE.into(), keys.operators.clone());
    let mut objects = Vec::new();
    objects.push(put(Api::namespaced(client.clone(), &ns), plan.service_account()).await?);
    objects.push(put(Api::<Role>::namespaced(client.clone(), &ns), plan.role()).await?);
    objects.push(
        put(
            Api::<RoleBinding>::namespaced(client.clone(), &ns),
            plan.role_binding(),
        )
        .await?,
    );
    objects.push(put(Api::<ClusterRole>::all(client.clone()), plan.cluster_role()).await?);
    objects.push(
        put(
            Api::<ClusterRoleBinding>::all(client.clone()),
            plan.cluster_role_binding(),
        )
        .await?,
    );
    objects.push(
        put(
            Api::<ConfigMap>::namespaced(client.clone(), &ns),
            plan.config_map(),
        )
        .await?,
    );
    objects.push(put(secrets, plan.secret()).await?);
    if let Some(lb) = plan.load_balancer() {
        objects.push(put(Api::<Service>::namespaced(client.clone(), &ns), lb).await?);
    }
    let public = host.public_key();
    let mut deployment = plan.deployment();
    // The Google account too: a pod keeps the token it was given until it expires.
    let account = plan.google_service_account.clone().unwrap_or_default();
    let settings = plan
        .secrets
        .iter()
        .fold(format!("{}\0{account}", plan.document), |text, (k, v)| {
            format!("{text}\0{k}\0{v}")
        });
    if let Some(template) = deployment
        .spec
        .as_mut()
        .and_then(|s| s.template.metadata.as_mut())
    {
        template
            .annotations
            .get_or_insert_with(Default::default)
            .insert(
                super::SETTINGS_ANNOTATION.into(),
                // 32 bits: enough to tell a change, too few to say anything of a secret.
                format!("{:08x}", super::fnv(settings.as_bytes()) as u32),
            );
    }
    deployment
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(super::DESIRED_ANNOTATION.into(), desired);
    if plan.serve {
        deployment
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(
                super::HOST_KEY_ANNOTATION.into(),
                public.to_openssh().unwrap_or_default(),
            );
    }
    objects.push(
        put(
            Api::<Deployment>::namespaced(client.clone(), &ns),
            deployment,
        )
        .await?,
    );
    Ok(Installed {
        objects,
        host_key_fingerprint: plan
            .serve
            .then(|| public.fingerprint(HashAlg::Sha256).to_string()),
        host_key: plan.serve.then(|| public.to_openssh().unwrap_or_default()),
    })
}

/// A new Ed25519 host key.
fn new_host_key() -> Result<PrivateKey, WatcherError> {
    let seed: [u8; 32] = rand::random();
    Ok(PrivateKey::from(Ed25519Keypair::from_seed(&seed)))
}

/// Makes `object`, or replaces the one there (its `resourceVersion` kept: a write over a newer
/// one is refused and tried again); `Kind/name`.
async fn put<K>(api: Api<K>, object: K) -> Result<String, WatcherError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + std::fmt::Debug,
{
    let what = format!("{}/{}", K::kind(&()), object.name_any());
    let name = object.name_any();
    for _ in 0..5 {
        match api.create(&PostParams::default(), &object).await {
            Ok(_) => return Ok(what),
            Err(e) if status_code(&e) == Some(409) => {}
            Err(e) => return Err(WatcherError::api(format!("making {what}"))(e)),
        }
        let Some(there) = api
            .get_opt(&name)
            .await
            .map_err(WatcherError::api(format!("reading {what}")))?
        else {
            continue;
        };
        let mut updated = object.clone();
        updated.meta_mut().resource_version = there.meta().resource_version.clone();
        match api.replace(&name, &PostParams::default(), &updated).await {
            Ok(_) => return Ok(what),
            Err(e) if status_code(&e) == Some(409) => continue,
            Err(e) => return Err(WatcherError::api(format!("updating {what}"))(e)),
        }
    }
    Err(WatcherError::Busy(format!(
        "{what} kept changing under the install: run it again"
    )))
}

/// What the watcher's Google service account must be granted, as `gcloud` commands, and what
/// does not work until it is: resizing pools (idle, a spent budget), the spot fallback's pool,
/// applying a plan.
pub fn iam_commands(project: &str, namespace: &str, job: &str, gsa: Option<&str>) -> Vec<String> {
    let ksa = super::name(job);
    let gsa_name = gsa.map_or_else(
        || format!("gantry-watcher@{project}.iam.gserviceaccount.com"),
        str::to_string,
    );
    let mut commands = Vec::new();
    if gsa.is_none() {
        commands.push(format!(
            "gcloud iam service-accounts create gantry-watcher --project {project}   # then set [watcher] google-service-account = \"{gsa_name}\" and install again"
        ));
    }
    commands.push(format!(
        "gcloud iam service-accounts add-iam-policy-binding {gsa_name} --project {project} --role roles/iam.workloadIdentityUser --member \"serviceAccount:{project}.svc.id.goog[{namespace}/{ksa}]\""
    ));
    commands.push(format!(
        "gcloud projects add-iam-policy-binding {project} --member \"serviceAccount:{gsa_name}\" --role roles/container.clusterAdmin"
    ));
    commands
}

/// The objects by kind, for a summary line (`ServiceAccount, Role, …`).
pub fn kinds(objects: &[String]) -> BTreeMap<&str, usize> {
    let mut kinds = BTreeMap::new();
    for o in objects {
        *kinds.entry(o.split('/').next().unwrap_or(o)).or_insert(0) += 1;
    }
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_iam_commands_bind_the_watcher_s_account_to_its_google_one_and_grant_gke() {
        let commands = iam_commands("p", "default", "train", Some("g@p.iam.gserviceaccount.com"));
        assert_eq!(commands.len(), 2);
        assert!(
            commands[0].contains(
                "--member \"serviceAccount:p.svc.id.goog[default/gantry-watcher-train]\""
            )
        );
        assert!(commands[1].contains("roles/container.clusterAdmin"));
        let none = iam_commands("p", "default", "train", None);
        assert!(none[0].starts_with("gcloud iam service-accounts create gantry-watcher"));
    }
}
