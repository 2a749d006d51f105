//! The three entries Gantry owns in a kubeconfig, as `serde_norway` values: one item each of
//! `clusters`, `contexts` and `users`, all named after the context. Keys are in the order
//! kubectl and gcloud write them (alphabetical), so a later rewrite by either moves nothing.

use serde_norway::{Mapping, Value};

use super::Credential;

/// The hint gcloud puts in the exec user, shown by kubectl when the plugin is missing.
const INSTALL_HINT: &str = "Install gke-gcloud-auth-plugin for use with kubectl by following https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin";

/// Our entries for one context.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Entries {
    pub name: String,
    pub cluster: Value,
    pub context: Value,
    pub user: Value,
}

impl Entries {
    /// `server` is the endpoint without a scheme (GKE's `endpoint`), `ca_base64` the cluster's
    /// CA certificate as GKE returns it (base64 of the PEM).
    pub fn new(name: &str, server: &str, ca_base64: &str, credential: &Credential) -> Self {
        let cluster = map([
            (
                "cluster",
                map([
                    ("certificate-authority-data", ca_base64.into()),
                    ("server", format!("https://{server}").into()),
                ]),
            ),
            ("name", name.into()),
        ]);
        let context = map([
            (
                "context",
                map([("cluster", name.into()), ("user", name.into())]),
            ),
            ("name", name.into()),
        ]);
        let user = map([("name", name.into()), ("user", user(credential))]);
        Self {
            name: name.to_string(),
            cluster,
            context,
            user,
        }
    }

    /// `(top-level key, our item)` for each of the three lists, in kubectl's key order.
    pub fn lists(&self) -> [(&'static str, &Value); 3] {
        [
            ("clusters", &self.cluster),
            ("contexts", &self.context),
            ("users", &self.user),
        ]
    }

    /// Whether a list item is one of ours (its `name` is our context's name).
    pub fn owns(&self, item: &Value) -> bool {
        item.get("name").and_then(Value::as_str) == Some(self.name.as_str())
    }
}

fn user(credential: &Credential) -> Value {
    match credential {
        Credential::GcloudPlugin => map([(
            "exec",
            map([
                ("apiVersion", "client.authentication.k8s.io/v1beta1".into()),
                ("command", "gke-gcloud-auth-plugin".into()),
                ("installHint", INSTALL_HINT.into()),
                ("interactiveMode", "IfAvailable".into()),
                ("provideClusterInfo", true.into()),
            ]),
        )]),
        Credential::TokenFile(path) => map([("tokenFile", path.display().to_string().into())]),
    }
}

fn map<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Mapping(
        pairs
            .into_iter()
            .map(|(k, v)| (Value::from(k), v))
            .collect::<Mapping>(),
    )
}
