//! Gantry in the cluster: the watcher. What a run nobody watches needs — recovery of a gang a
//! preemption broke, the spot fallback, the guards, the messages, the metered cost — happens in
//! a Gantry engine; this runs one as a Deployment of one replica in the Job's namespace, so it
//! goes on with every laptop closed. It is the same binary (`gantry --in-cluster watch`, or
//! `serve` for SSH viewers), with its own ServiceAccount and the least RBAC it needs
//! ([`rbac`]), its settings in a ConfigMap and its secrets in a Secret ([`carried`]), and its
//! death a 15-second Lease handover. Its objects carry a component label of their own, so that
//! deleting the Job's objects never touches them, and `uninstall` removes exactly them.
//!
//! - [`objects`]: every object it is made of, from the config.
//! - [`install`], [`uninstall`], [`status`]: `gantry watcher install | uninstall | status`.
//! - [`carried`]: the settings carried into the cluster, versioned, read leniently by an older
//!   watcher.
//! - [`desired`]: the watcher the config asks for, and its fingerprint; [`planned`]: the watcher
//!   in a plan (`gantry plan`, the plan overlay): what is made or changed, and its cost.

pub mod carried;
pub mod desired;
pub mod error;
pub mod inside;
pub mod install;
pub mod objects;
pub mod planned;
pub mod rbac;
pub mod status;
pub mod uninstall;

use std::collections::BTreeMap;

use crate::k8s::labels::{MANAGED_BY, MANAGER};

/// The component label every watcher object carries (and no object of a training Job).
pub const COMPONENT: &str = "app.kubernetes.io/component";
pub const COMPONENT_WATCHER: &str = "watcher";
/// Which training Job a watcher watches (not `gantry.dev/job`: a Job's objects are found by
/// that, and the watcher's are not the Job's).
pub const WATCHES: &str = "gantry.dev/watches";
/// The version of Gantry a watcher runs, on its objects and on the Lease it holds.
pub const VERSION_LABEL: &str = "gantry.dev/version";
/// The SSH server's public host key, on the Deployment (`gantry watcher ssh` pins it; public,
/// so readable by whoever may read the Deployment).
pub const HOST_KEY_ANNOTATION: &str = "gantry.dev/ssh-host-key";
/// A fingerprint of the settings and secrets on the pod template: changing them rolls the pod
/// (a pod reads them when it starts).
pub const SETTINGS_ANNOTATION: &str = "gantry.dev/settings";
/// A fingerprint of everything the config decides of the watcher, on its Deployment: what a plan
/// compares with the config's, without reading the Secret ([`desired`]).
pub const DESIRED_ANNOTATION: &str = "gantry.dev/desired";

/// This Gantry's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the pod finds what it is given.
pub const CONFIG_DIR: &str = "/etc/gantry/config";
pub const SECRET_DIR: &str = "/etc/gantry/secret";
/// The file of the carried settings in [`CONFIG_DIR`].
pub const CONFIG_FILE: &str = "config.json";
/// The port of its health endpoint (`/healthz`, `/readyz`) and of its SSH server.
pub const HEALTH_PORT: u16 = 8080;
pub const SSH_PORT: u16 = 2222;

/// The variables that say where the pod has its settings and secrets (the Deployment sets
/// them; on the simulator the kubelet rewrites them to the volumes' directories).
pub const CONFIG_ENV: &str = "GANTRY_WATCHER_CONFIG";
pub const SECRETS_ENV: &str = "GANTRY_WATCHER_SECRETS";

/// The acts that need the GKE grant.
pub const NEEDS_GKE: [&str; 4] = [
    "scale-to-zero (idle, a spent budget)",
    "spot-fallback",
    "apply-plan",
    "cluster status and its cost",
];

/// The name of the watcher of training Job `job` (and of most of its objects).
pub fn name(job: &str) -> String {
    bounded(&format!("gantry-watcher-{job}"))
}

/// The name of its ClusterRole and binding: cluster-wide, so the namespace is in it.
pub fn cluster_name(namespace: &str, job: &str) -> String {
    bounded(&format!("gantry-watcher-{namespace}-{job}"))
}

/// The ConfigMap where the watcher keeps its outbox (one writer: the Lease holder).
pub fn outbox_name(job: &str) -> String {
    bounded(&format!("{}-outbox", name(job)))
}

/// The ConfigMap where the watcher says what it can and cannot do from inside.
pub fn report_name(job: &str) -> String {
    bounded(&format!("{}-report", name(job)))
}

/// A name the API server takes (63 characters at most): a long one ends in a hash of itself.
fn bounded(name: &str) -> String {
    if name.len() <= 63 {
        return name.to_string();
    }
    let hash = fnv(name.as_bytes());
    format!("{}-{:08x}", name[..54].trim_end_matches('-'), hash as u32)
}

/// FNV-1a: a short, stable fingerprint of bytes (names, settings), not a secret's digest.
pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The labels of every object of the watcher of `job`.
pub fn labels(job: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (MANAGED_BY.to_string(), MANAGER.to_string()),
        (
            "app.kubernetes.io/name".to_string(),
            "gantry-watcher".to_string(),
        ),
        (COMPONENT.to_string(), COMPONENT_WATCHER.to_string()),
        (WATCHES.to_string(), job.to_string()),
        (VERSION_LABEL.to_string(), VERSION.to_string()),
    ])
}

/// The label selector of the watcher of `job`'s objects.
pub fn selector(job: &str) -> String {
    format!("{MANAGED_BY}={MANAGER},{COMPONENT}={COMPONENT_WATCHER},{WATCHES}={job}")
}

/// The namespace the watcher of `config`'s Job runs in.
pub fn namespace(config: &crate::config::Config) -> String {
    config
        .watcher
        .namespace
        .clone()
        .unwrap_or_else(|| config.job.namespace.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_ones_the_api_server_takes_however_long_the_job() {
        assert_eq!(name("ml-training-job"), "gantry-watcher-ml-training-job");
        let long = "a".repeat(60);
        let n = name(&long);
        assert!(n.len() <= 63 && crate::names::is_rfc1123_label(&n), "{n}");
        assert_ne!(n, name(&"a".repeat(59)), "two long names stay apart");
        assert!(crate::names::is_rfc1123_label(&outbox_name(&long)));
    }
}
