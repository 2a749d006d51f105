//! The control loops of a simulated cluster. Each subscribes to the store's changes and acts.

use std::sync::Arc;

use super::cluster::ClusterState;

pub mod deployment;
pub mod gc;
pub mod job;
pub mod keyed;
pub mod kubelet;
pub mod load_balancer;
pub mod replicaset;
pub mod serviceaccounts;

pub fn start(state: &Arc<ClusterState>) {
    tokio::spawn(job::run(state.clone()));
    tokio::spawn(kubelet::run(state.clone()));
    tokio::spawn(gc::run(state.clone()));
    tokio::spawn(load_balancer::run(state.clone()));
    tokio::spawn(serviceaccounts::run(state.clone()));
    tokio::spawn(replicaset::run(state.clone()));
    tokio::spawn(deployment::run(state.clone()));
    tokio::spawn(crate::kube::dcgm::run(state.clone()));
}
