//! The least the watcher may do, as RBAC rules: in its namespace, what an engine needs to follow
//! and recover a training Job (its attempts, their pods, logs and events, the recoverer's Lease,
//! the headless Service of an Indexed run, its own ConfigMaps, and an attempt's code copied into
//! the ConfigMap of the attempt that recovers it: `get` and `create`); across the cluster,
//! reading the nodes (the meter) and what metrics-server says (usage), the GPUs through the DCGM
//! exporters' pod proxy (`pods` list, `pods/proxy` get: wide — it reaches any pod's ports — and
//! needed because the exporter's namespace is the cluster's choice), and asking what it may do
//! (its own report). Its Secret reaches it as a volume: no rule reads Secrets. README lists these; the
//! simulator enforces them, so a test that the watcher does its whole job with exactly these
//! rules can fail.

pub use crate::k8s::rbac::Rule;

/// In the watcher's namespace (a Role).
pub const NAMESPACED: &[Rule] = &[
    Rule {
        group: "batch",
        resources: &["jobs"],
        act: "follow, recover and start attempts (Jobs)",
        verbs: &[
            "get", "list", "watch", "create", "update", "patch", "delete",
        ],
    },
    Rule {
        group: "",
        resources: &["pods"],
        act: "follow the attempts' pods",
        verbs: &["get", "list", "watch", "delete"],
    },
    Rule {
        group: "",
        resources: &["pods/log"],
        act: "read the pods' logs (stalls, metrics)",
        verbs: &["get"],
    },
    Rule {
        group: "",
        resources: &["events"],
        act: "read why pods wait (events)",
        verbs: &["get", "list", "watch"],
    },
    Rule {
        group: "coordination.k8s.io",
        resources: &["leases"],
        act: "hold the recoverer's Lease",
        verbs: &["get", "list", "watch", "create", "update"],
    },
    Rule {
        group: "",
        resources: &["services"],
        act: "make an Indexed run's headless Service",
        verbs: &["get", "list", "watch", "create", "delete"],
    },
    Rule {
        group: "",
        resources: &["configmaps"],
        act: "keep the outbox and this report (ConfigMaps)",
        verbs: &["get", "list", "watch", "create", "update", "patch"],
    },
];

/// Across the cluster (a ClusterRole).
pub const CLUSTER: &[Rule] = &[
    Rule {
        group: "",
        resources: &["nodes"],
        act: "meter the nodes' cost",
        verbs: &["get", "list", "watch"],
    },
    // What reading the GPUs asks (`k8s::gpus::RBAC_RULES`): the DCGM exporters run in another
    // namespace (`gke-managed-system` on GKE), found by label and read through the pod proxy.
    Rule {
        group: "",
        resources: &["pods"],
        act: "find the DCGM exporters (pods, across namespaces)",
        verbs: &["list"],
    },
    Rule {
        group: "",
        resources: &["pods/proxy"],
        act: "read the GPUs (the exporters through pods/proxy)",
        verbs: &["get"],
    },
    Rule {
        group: "metrics.k8s.io",
        resources: &["pods", "nodes"],
        act: "read usage (metrics-server)",
        verbs: &["get", "list"],
    },
    Rule {
        group: "authorization.k8s.io",
        resources: &["selfsubjectaccessreviews"],
        act: "check its own rights",
        verbs: &["create"],
    },
];

/// The rules as README lists them: `batch/jobs: get, list, …`.
pub fn described(rules: &[Rule]) -> Vec<String> {
    rules
        .iter()
        .map(|r| {
            let group = if r.group.is_empty() { "core" } else { r.group };
            format!("{group}/{}: {}", r.resources.join(", "), r.verbs.join(", "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_rule_reads_secrets_or_reaches_beyond_what_an_engine_does() {
        for rule in NAMESPACED.iter().chain(CLUSTER) {
            assert!(!rule.resources.contains(&"secrets"), "{rule:?}");
            assert!(!rule.verbs.contains(&"*") && !rule.resources.contains(&"*"));
        }
        let grants: Vec<_> = NAMESPACED.iter().flat_map(Rule::grants).collect();
        assert!(grants.contains(&("get", "", "pods", "log")));
        assert!(grants.contains(&("update", "coordination.k8s.io", "leases", "")));
    }

    #[test]
    fn the_cluster_role_grants_everything_reading_the_gpus_asks() {
        let granted: Vec<_> = CLUSTER.iter().flat_map(Rule::grants).collect();
        for asked in crate::k8s::gpus::RBAC_RULES.iter().flat_map(Rule::grants) {
            assert!(granted.contains(&asked), "{asked:?} is not granted");
        }
    }
}
