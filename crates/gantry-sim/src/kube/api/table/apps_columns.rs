//! The columns of `kubectl get deployments` and `kubectl get replicasets`
//! (`printDeployment`, `printReplicaSet`), with the field documentation kube-apiserver sends.

use super::columns::{AGE, CONTAINERS_DESC, Column, IMAGES_DESC, NAME, col, wide};

const fn integer(name: &'static str, description: &'static str) -> Column {
    Column {
        name,
        kind: "integer",
        format: "",
        description,
        priority: 0,
    }
}

pub(super) const DEPLOYMENT_COLUMNS: &[Column] = &[
    NAME,
    col("Ready", "Number of the pod with ready state"),
    col(
        "Up-to-date",
        "Total number of non-terminating pods targeted by this deployment that have the desired template spec.",
    ),
    col(
        "Available",
        "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.",
    ),
    AGE,
    wide("Containers", CONTAINERS_DESC),
    wide("Images", IMAGES_DESC),
    wide(
        "Selector",
        "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.",
    ),
];

pub(super) const REPLICA_SET_COLUMNS: &[Column] = &[
    NAME,
    integer(
        "Desired",
        "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
    ),
    integer(
        "Current",
        "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
    ),
    integer(
        "Ready",
        "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
    ),
    AGE,
    wide("Containers", CONTAINERS_DESC),
    wide("Images", IMAGES_DESC),
    wide(
        "Selector",
        "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    ),
];
