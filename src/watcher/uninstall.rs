//! `gantry watcher uninstall`: removes exactly the watcher's objects — those with its labels —
//! and none of the training Job's (its attempts, their Services and Leases stay). Its outbox only
//! once it is empty: what waits to be sent is said, and kept unless `--force`.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, DeleteParams, ListParams};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;

use super::error::WatcherError;
use crate::k8s::status_code;

/// What uninstall removed, and what it kept.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Removed {
    /// `Deployment/gantry-watcher-ml-training-job`, …
    pub objects: Vec<String>,
    /// Messages still waiting in the outbox it kept (0: none, or it was removed).
    pub pending_kept: usize,
}

pub async fn uninstall(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    force: bool,
) -> Result<Removed, WatcherError> {
    let selector = super::selector(job);
    let mut removed = Removed::default();
    let ns = |c: &kube::Client| c.clone();
    let outbox = super::outbox_name(job);
    let maps: Api<ConfigMap> = Api::namespaced(ns(client), namespace);
    let pending = match maps
        .get_opt(&outbox)
        .await
        .map_err(WatcherError::api(format!("reading ConfigMap {outbox}")))?
    {
        Some(map) => crate::notify::pending_in(&map),
        None => 0,
    };
    let keep_outbox = pending > 0 && !force;
    if keep_outbox {
        removed.pending_kept = pending;
    }
    removed.objects.extend(
        remove(
            Api::<Deployment>::namespaced(ns(client), namespace),
            &selector,
            None,
        )
        .await?,
    );
    removed.objects.extend(
        remove(
            Api::<Service>::namespaced(ns(client), namespace),
            &selector,
            None,
        )
        .await?,
    );
    let kept = keep_outbox.then_some(outbox.as_str());
    removed.objects.extend(remove(maps, &selector, kept).await?);
    removed.objects.extend(
        remove(
            Api::<Secret>::namespaced(ns(client), namespace),
            &selector,
            None,
        )
        .await?,
    );
    removed.objects.extend(
        remove(
            Api::<RoleBinding>::namespaced(ns(client), namespace),
            &selector,
            None,
        )
        .await?,
    );
    removed.objects.extend(
        remove(
            Api::<Role>::namespaced(ns(client), namespace),
            &selector,
            None,
        )
        .await?,
    );
    removed.objects.extend(
        remove(
            Api::<ServiceAccount>::namespaced(ns(client), namespace),
            &selector,
            None,
        )
        .await?,
    );
    removed
        .objects
        .extend(remove(Api::<ClusterRoleBinding>::all(ns(client)), &selector, None).await?);
    removed
        .objects
        .extend(remove(Api::<ClusterRole>::all(ns(client)), &selector, None).await?);
    Ok(removed)
}

/// Deletes every object `selector` finds (but `keep`); their `Kind/name`.
async fn remove<K>(
    api: Api<K>,
    selector: &str,
    keep: Option<&str>,
) -> Result<Vec<String>, WatcherError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let kind = K::kind(&());
    let found = api
        .list(&ListParams::default().labels(selector))
        .await
        .map_err(WatcherError::api(format!("listing the watcher's {kind}s")))?;
    let mut gone = Vec::new();
    for name in found.items.iter().map(ResourceExt::name_any) {
        if Some(name.as_str()) == keep {
            continue;
        }
        match api.delete(&name, &DeleteParams::background()).await {
            Ok(_) => gone.push(format!("{kind}/{name}")),
            Err(e) if status_code(&e) == Some(404) => {}
            Err(e) => return Err(WatcherError::api(format!("deleting {kind}/{name}"))(e)),
        }
    }
    Ok(gone)
}
