//! The resource types the simulated API server serves, as discovery describes them.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Namespace,
    Node,
    Pod,
    Service,
    Event,
    ConfigMap,
    Secret,
    ServiceAccount,
    Job,
    Deployment,
    ReplicaSet,
    Role,
    RoleBinding,
    ClusterRole,
    ClusterRoleBinding,
    SelfSubjectAccessReview,
    SelfSubjectRulesReview,
    SubjectAccessReview,
    SelfSubjectReview,
    TokenReview,
    Lease,
}

#[derive(Debug)]
pub struct ResourceType {
    pub kind: Kind,
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind_name: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
    pub subresources: &'static [&'static str],
    pub verbs: &'static [&'static str],
}

const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The reviews: asked by a create, answered, never stored.
const CREATE_ONLY: &[&str] = &["create"];

pub const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

pub const RESOURCES: &[ResourceType] = &[
    ResourceType {
        kind: Kind::Namespace,
        group: "",
        version: "v1",
        plural: "namespaces",
        singular: "namespace",
        kind_name: "Namespace",
        namespaced: false,
        short_names: &["ns"],
        categories: &[],
        subresources: &["status"],
        verbs: &[
            "create", "delete", "get", "list", "patch", "update", "watch",
        ],
    },
    ResourceType {
        kind: Kind::Node,
        group: "",
        version: "v1",
        plural: "nodes",
        singular: "node",
        kind_name: "Node",
        namespaced: false,
        short_names: &["no"],
        categories: &[],
        subresources: &["status"],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::Pod,
        group: "",
        version: "v1",
        plural: "pods",
        singular: "pod",
        kind_name: "Pod",
        namespaced: true,
        short_names: &["po"],
        categories: &["all"],
        subresources: &["status", "log", "portforward"],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::Service,
        group: "",
        version: "v1",
        plural: "services",
        singular: "service",
        kind_name: "Service",
        namespaced: true,
        short_names: &["svc"],
        categories: &["all"],
        subresources: &["status"],
        verbs: &[
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ],
    },
    ResourceType {
        kind: Kind::Event,
        group: "",
        version: "v1",
        plural: "events",
        singular: "event",
        kind_name: "Event",
        namespaced: true,
        short_names: &["ev"],
        categories: &[],
        subresources: &[],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::ConfigMap,
        group: "",
        version: "v1",
        plural: "configmaps",
        singular: "configmap",
        kind_name: "ConfigMap",
        namespaced: true,
        short_names: &["cm"],
        categories: &[],
        subresources: &[],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::Secret,
        group: "",
        version: "v1",
        plural: "secrets",
        singular: "secret",
        kind_name: "Secret",
        namespaced: true,
        short_names: &[],
        categories: &[],
        subresources: &[],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::ServiceAccount,
        group: "",
        version: "v1",
        plural: "serviceaccounts",
        singular: "serviceaccount",
        kind_name: "ServiceAccount",
        namespaced: true,
        short_names: &["sa"],
        categories: &[],
        subresources: &["token"],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::Job,
        group: "batch",
        version: "v1",
        plural: "jobs",
        singular: "job",
        kind_name: "Job",
        namespaced: true,
        short_names: &[],
        categories: &["all"],
        subresources: &["status"],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::Deployment,
        group: "apps",
        version: "v1",
        plural: "deployments",
        singular: "deployment",
        kind_name: "Deployment",
        namespaced: true,
        short_names: &["deploy"],
        categories: &["all"],
        subresources: &["status", "scale"],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::ReplicaSet,
        group: "apps",
        version: "v1",
        plural: "replicasets",
        singular: "replicaset",
        kind_name: "ReplicaSet",
        namespaced: true,
        short_names: &["rs"],
        categories: &["all"],
        subresources: &["status", "scale"],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::Role,
        group: RBAC_GROUP,
        version: "v1",
        plural: "roles",
        singular: "role",
        kind_name: "Role",
        namespaced: true,
        short_names: &[],
        categories: &[],
        subresources: &[],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::RoleBinding,
        group: RBAC_GROUP,
        version: "v1",
        plural: "rolebindings",
        singular: "rolebinding",
        kind_name: "RoleBinding",
        namespaced: true,
        short_names: &[],
        categories: &[],
        subresources: &[],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::ClusterRole,
        group: RBAC_GROUP,
        version: "v1",
        plural: "clusterroles",
        singular: "clusterrole",
        kind_name: "ClusterRole",
        namespaced: false,
        short_names: &[],
        categories: &[],
        subresources: &[],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::ClusterRoleBinding,
        group: RBAC_GROUP,
        version: "v1",
        plural: "clusterrolebindings",
        singular: "clusterrolebinding",
        kind_name: "ClusterRoleBinding",
        namespaced: false,
        short_names: &[],
        categories: &[],
        subresources: &[],
        verbs: ALL_VERBS,
    },
    ResourceType {
        kind: Kind::SelfSubjectAccessReview,
        group: "authorization.k8s.io",
        version: "v1",
        plural: "selfsubjectaccessreviews",
        singular: "selfsubjectaccessreview",
        kind_name: "SelfSubjectAccessReview",
        namespaced: false,
        short_names: &[],
        categories: &[],
        subresources: &[],
        verbs: CREATE_ONLY,
    },
    ResourceType {
        kind: Kind::SelfSubjectRulesReview,
        group: "authorization.k8s.io",
        version: "v1",
        plural: "selfsubjectrulesreviews",
        singular: "selfsubjectrulesreview",
        kind_name: "SelfSubjectRulesReview",
        namespaced: false,
        short_names: &[],
        categories: &[],
        subresources: &[],
        verbs: CREATE_ONLY,
    },
    ResourceType {
        kind: Kind::SubjectAccessReview,
        group: "authorization.k8s.io",
        version: "v1",
        plural: "subjectaccessreviews",
        singular: "subjectaccessreview",
        kind_name: "SubjectAccessReview",
        namespaced: false,
        short_names: &[],
        categories: &[],
        subresources: &[],
        verbs: CREATE_ONLY,
    },
    ResourceType {
        kind: Kind::SelfSubjectReview,
        group: "authentication.k8s.io",
        version: "v1",
        plural: "selfsubjectreviews",
        singular: "selfsubjectreview",
        kind_name: "SelfSubjectReview",
        namespaced: false,
        short_names: &[],
        categories: &[],
        subresources: &[],
        verbs: CREATE_ONLY,
    },
    ResourceType {
        kind: Kind::TokenReview,
        group: "authentication.k8s.io",
        version: "v1",
        plural: "tokenreviews",
        singular: "tokenreview",
        kind_name: "TokenReview",
        namespaced: false,
        short_names: &[],
        categories: &[],
        subresources: &[],
        verbs: CREATE_ONLY,
    },
    ResourceType {
        kind: Kind::Lease,
        group: "coordination.k8s.io",
        version: "v1",
        plural: "leases",
        singular: "lease",
        kind_name: "Lease",
        namespaced: true,
        short_names: &[],
        categories: &[],
        subresources: &[],
        verbs: ALL_VERBS,
    },
];

impl Kind {
    pub fn resource(self) -> &'static ResourceType {
        // Every Kind has exactly one entry in RESOURCES.
        RESOURCES
            .iter()
            .find(|r| r.kind == self)
            .unwrap_or(&RESOURCES[0])
    }

    /// Whether a PUT without `metadata.resourceVersion` overwrites what is stored (the kind's
    /// strategy's `AllowUnconditionalUpdate`). Leases refuse it: a leader election is a
    /// compare-and-swap on the version read.
    pub fn allows_unconditional_update(self) -> bool {
        self != Kind::Lease
    }

    /// Whether a PUT of a name not stored creates it (`AllowCreateOnUpdate`): of the kinds
    /// served, Leases and the RBAC kinds (`kubectl auth reconcile` relies on it; Events allow it
    /// too upstream, the simulator does not).
    pub fn allows_create_on_update(self) -> bool {
        matches!(
            self,
            Kind::Lease
                | Kind::Role
                | Kind::RoleBinding
                | Kind::ClusterRole
                | Kind::ClusterRoleBinding
        )
    }
}

impl ResourceType {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether requests create answers rather than objects (the access and token reviews).
    pub fn is_review(&self) -> bool {
        self.verbs == CREATE_ONLY
    }

    pub fn find(group: &str, version: &str, plural: &str) -> Option<&'static ResourceType> {
        RESOURCES
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
    }

    pub fn groups() -> Vec<(&'static str, &'static str)> {
        let mut groups: Vec<(&str, &str)> = RESOURCES
            .iter()
            .filter(|r| !r.group.is_empty())
            .map(|r| (r.group, r.version))
            .collect();
        // Kinds of one group need not be next to each other: keep each group once, in order.
        let mut seen = Vec::new();
        groups.retain(|g| {
            let new = !seen.contains(g);
            seen.push(*g);
            new
        });
        groups
    }
}
