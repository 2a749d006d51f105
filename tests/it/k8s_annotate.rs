//! A Job annotation written by several engines at once (`k8s::annotate`): each write is made
//! against the resourceVersion it read, so none is lost — the simulated API server answers 409
//! to the loser, which reads again and adds its part.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use gantry::k8s::annotate;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, PostParams};

const KEY: &str = "gantry.dev/test-list";

#[tokio::test]
async fn writers_at_once_each_add_their_part_and_none_is_lost() {
    let cloud = common::cloud_with_cluster().await;
    let client = common::kube_client(&cloud);
    let jobs: Api<Job> = Api::namespaced(client.clone(), "default");
    let job: Job = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "annotated"},
        "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}]}}},
    }))
    .unwrap();
    jobs.create(&PostParams::default(), &job).await.unwrap();

    let writers = (0..8).map(|i| {
        let client = client.clone();
        tokio::spawn(async move {
            annotate::update(&client, "default", "annotated", KEY, "adding", |a| {
                let mut list: Vec<u32> = a
                    .and_then(|a| a.get(KEY))
                    .map(|v| serde_json::from_str(v).unwrap())
                    .unwrap_or_default();
                list.push(i);
                Some((serde_json::to_string(&list).unwrap(), i))
            })
            .await
        })
    });
    let mut written = Vec::new();
    for writer in writers {
        // Up to 5 tries each: with eight at once some may give up, and say so.
        match writer.await.unwrap() {
            Ok(Some(i)) => written.push(i),
            Ok(None) => panic!("the Job is there"),
            Err(e) => assert!(e.contains("changed under every one of 5 writes"), "{e}"),
        }
    }
    let stored = jobs.get("annotated").await.unwrap();
    let mut list: Vec<u32> =
        serde_json::from_str(&stored.metadata.annotations.unwrap()[KEY]).unwrap();
    list.sort_unstable();
    written.sort_unstable();
    assert_eq!(
        list, written,
        "every write that said so is there, and no other"
    );
    assert!(!written.is_empty());

    // Nothing to write, or a Job that is not there: nothing written.
    let none = annotate::update(&client, "default", "annotated", KEY, "adding", |_| {
        None::<(String, ())>
    });
    assert_eq!(none.await.unwrap(), None);
    let gone = annotate::update(&client, "default", "not-there", KEY, "adding", |_| {
        Some(("x".to_string(), ()))
    });
    assert_eq!(gone.await.unwrap(), None);
}
