//! GKE's refusals and how Gantry tells them: an operation ending in error, a quota, a refused
//! token, a denied permission, and too many requests (retried, then surfaced).

use gantry::config::ClusterConfig;
use gantry::gke::{Auth, ClusterStatus, Gke, GkeError, ProvisionEvent, up};
use gantry::sim::faults::Fault;
use tokio::sync::mpsc::unbounded_channel;

use super::{drain, fast_poll, fast_retry, setup, target, with_patience};

async fn failing_create(fault: Fault) -> GkeError {
    let s = setup(0.001, vec![]).await;
    s.cloud.faults().set(fault);
    let gke = s.gke().await;
    let (tx, _rx) = unbounded_channel();
    let err = with_patience(up(
        &gke,
        &target(),
        &ClusterConfig::default(),
        fast_poll(),
        &tx,
    ))
    .await
    .unwrap_err();
    assert_eq!(err.exit_code(), 1, "{err}");
    err
}

#[tokio::test]
async fn an_operation_ending_in_error_carries_its_message() {
    let err = failing_create(Fault::GkeCreateError("the zone ran out of luck".into())).await;
    assert!(
        matches!(&err, GkeError::OperationFailed { message, .. } if message == "the zone ran out of luck"),
        "{err:?}"
    );
    assert!(err.to_string().contains("the zone ran out of luck"));
}

#[tokio::test]
async fn quota_errors_are_shown() {
    let err = failing_create(Fault::GkeQuota).await;
    assert!(
        err.to_string().contains("Insufficient regional quota"),
        "{err}"
    );
}

#[tokio::test]
async fn a_refused_token_names_the_fix() {
    let s = setup(0.001, vec![]).await;
    let dir = tempfile::tempdir().unwrap();
    let wrong = dir.path().join("token");
    std::fs::write(&wrong, "ya29.not-the-token\n").unwrap();
    let gke = Gke::connect(
        Auth::token_file(&wrong).unwrap(),
        Some(s.cloud.gke_endpoint()),
    )
    .await
    .unwrap();
    let err = gke.get_cluster(&target()).await.unwrap_err();
    assert!(matches!(err, GkeError::Unauthenticated { .. }), "{err:?}");
    assert_eq!(err.exit_code(), 1);
    assert!(
        err.to_string()
            .contains("gcloud auth application-default login")
    );
    // The file is read again after the refusal: the right token works at once.
    std::fs::write(&wrong, s.cloud.token()).unwrap();
    assert!(gke.get_cluster(&target()).await.unwrap().is_none());
}

#[tokio::test]
async fn permission_denied_is_reported() {
    let s = setup(0.001, vec![]).await;
    s.cloud.faults().set(Fault::GkePermissionDenied);
    let gke = s.gke().await;
    let (tx, _rx) = unbounded_channel();
    let err = up(&gke, &target(), &ClusterConfig::default(), fast_poll(), &tx)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, GkeError::PermissionDenied { message } if message.contains("container.clusters")),
        "{err:?}"
    );
    assert_eq!(err.exit_code(), 1);
}

#[tokio::test]
async fn too_many_requests_are_retried_then_surfaced() {
    let s = setup(0.001, vec![]).await;
    s.cloud.faults().set(Fault::Http429(100));
    // With few attempts the 429 comes out, after retries reported as events.
    let (tx, mut rx) = unbounded_channel();
    let gke = s
        .gke()
        .await
        .with_retry(fast_retry(3))
        .with_events(tx.clone());
    let err = gke.get_cluster(&target()).await.unwrap_err();
    assert!(
        matches!(
            &err,
            GkeError::Api {
                code: Some(429),
                ..
            }
        ),
        "{err:?}"
    );
    let retries = drain(&mut rx)
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                ProvisionEvent::Retrying {
                    status: Some(429),
                    ..
                }
            )
        })
        .count();
    assert_eq!(retries, 2);

    // With patience, the create goes through once the throttling stops.
    let gke = s
        .gke()
        .await
        .with_retry(fast_retry(u32::MAX))
        .with_events(tx.clone());
    let task = tokio::spawn(async move {
        up(&gke, &target(), &ClusterConfig::default(), fast_poll(), &tx).await
    });
    let first = with_patience(rx.recv()).await.unwrap();
    assert!(
        matches!(
            first,
            ProvisionEvent::Retrying {
                status: Some(429),
                ..
            }
        ),
        "{first:?}"
    );
    s.cloud.faults().clear();
    let outcome = with_patience(task).await.unwrap().unwrap();
    assert_eq!(outcome.cluster.status, ClusterStatus::Running);
}
