//! The simulated Kubernetes API through kube's real client and watcher: discovery, nodes, the Job
//! controller, the kubelet stand-in, logs, selectors, patches, deletion and watches. Grouped by
//! what they check: what any client of the API relies on (`api`), Jobs run by the controller
//! and the kubelet stand-in to their end (`job_controller`), and what keeps a pod from running
//! (`pod_troubles`), what kubectl does with Deployments and ServiceAccounts
//! (`kubectl_workloads`), pods run as local processes (`process_pods`) and Secrets (`secrets`),
//! through kubectl itself (`kubectl_env`). Here: the Job they all create and the waits they share.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api;
mod job_controller;
mod kubectl_env;
mod kubectl_workloads;
mod pod_troubles;
mod port_forward;
mod process_pods;
mod secrets;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use kube::runtime::WatchStreamExt;
use serde_json::json;

fn job_manifest(name: &str, env: serde_json::Value, extra_spec: serde_json::Value) -> Job {
    let mut job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": 2,
            "template": {
                "metadata": {"labels": {"job": "ml-training"}},
                "spec": {
                    "containers": [{"name": "ml-training-container", "image": "gcr.io/demo-project/ml-training-job:latest", "env": env}],
                    "restartPolicy": "Never"
                }
            }
        }
    });
    if let (Some(spec), Some(extra)) = (job["spec"].as_object_mut(), extra_spec.as_object()) {
        for (k, v) in extra {
            spec.insert(k.clone(), v.clone());
        }
    }
    serde_json::from_value(job).unwrap()
}

fn job_failed() -> impl kube::runtime::wait::Condition<Job> {
    |job: Option<&Job>| {
        job.and_then(|j| j.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Failed" && c.status == "True"))
    }
}

async fn pods_of(client: &kube::Client, job: &str) -> Vec<Pod> {
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    pods.list(&ListParams::default().labels(&format!("job-name={job}")))
        .await
        .unwrap()
        .items
}

async fn wait_for_pod(client: &kube::Client, job: &str, pred: impl Fn(&Pod) -> bool) -> Pod {
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let wc = kube::runtime::watcher::Config::default().labels(&format!("job-name={job}"));
    let mut stream = kube::runtime::watcher(pods, wc).applied_objects().boxed();
    while let Some(pod) = stream.try_next().await.unwrap() {
        if pred(&pod) {
            return pod;
        }
    }
    panic!("watch ended");
}
