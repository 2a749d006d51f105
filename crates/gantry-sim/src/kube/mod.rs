//! One simulated cluster's Kubernetes API: the object store, the controllers that act on it,
//! and the HTTPS server that serves it as kube-apiserver does.

pub mod admission;
pub mod api;
pub mod apps;
pub mod cluster;
pub mod configmaps;
pub mod controllers;
pub mod daemon_sets;
pub mod dcgm;
pub mod defaults;
pub mod drain;
pub mod errors;
pub mod events;
pub mod extended_resources;
pub mod hostile_fields;
pub mod identity;
pub mod lease;
pub mod lifecycle;
pub mod logbook;
pub mod meta;
pub mod micro_time;
pub mod names;
pub mod node_shutdown;
pub mod nodes;
pub mod pod_failure_policy;
pub mod pod_gc;
pub mod pod_status;
pub mod portforward;
pub mod process;
pub mod quantity;
pub mod rbac;
pub mod resources;
pub mod scheduler;
pub mod schemas;
pub mod secrets;
pub mod selectors;
pub mod server;
pub mod store;
#[cfg(test)]
pub mod test_pods;
pub mod tokens;
pub mod training_log;
pub mod workload;
