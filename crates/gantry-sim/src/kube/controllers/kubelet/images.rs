//! Image pulls: the events of a pull that succeeds, and for an image that cannot be pulled the
//! `ErrImagePull` / `ImagePullBackOff` cycle with the kubelet's doubling back-off, its message
//! the one containerd gives for the registry's answer.

use std::time::Duration;

use serde_json::Value;

use super::MIN_RETRY_WAIT;
use super::context::PodCtx;
use super::pod::{rand_byte, str_of};
use crate::kube::events::EventType;
use crate::kube::pod_status::{ContainerView, set_containers};

/// Why the registry refuses an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// A malformed reference, or one naming `does-not-exist` or `nonexistent`: no such image.
    NotFound,
    /// One naming `forbidden`: the registry answers 403 to the node's credentials.
    Forbidden,
}

fn refusal(image: &str) -> Option<Refusal> {
    if !image_parses(image) || image.contains("does-not-exist") || image.contains("nonexistent") {
        Some(Refusal::NotFound)
    } else if image.contains("forbidden") {
        Some(Refusal::Forbidden)
    } else {
        None
    }
}

/// The documented rule for images that cannot be pulled: a malformed reference, or one naming
/// `does-not-exist`, `nonexistent` or `forbidden`.
pub fn image_pullable(image: &str) -> bool {
    refusal(image).is_none()
}

/// The reference as containerd resolves it: `nginx` is `docker.io/library/nginx:latest`.
fn normalized(image: &str) -> String {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let first = name.split('/').next().unwrap_or_default();
    let has_registry =
        name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let mut full = if has_registry {
        name.to_string()
    } else if name.contains('/') {
        format!("docker.io/{name}")
    } else {
        format!("docker.io/library/{name}")
    };
    let last = full.rsplit('/').next().unwrap_or_default();
    if !last.contains(':') && digest.is_none() {
        full.push_str(":latest");
    }
    match digest {
        Some(digest) => format!("{full}@{digest}"),
        None => full,
    }
}

/// The token endpoint a registry sends a puller to: `registry/v2/token`, Docker Hub's own.
fn token_url(reference: &str) -> String {
    let (host, rest) = reference.split_once('/').unwrap_or((reference, ""));
    let repository = rest.split(['@', ':']).next().unwrap_or_default();
    let scope = format!("repository%3A{}%3Apull", repository.replace('/', "%2F"));
    if host == "docker.io" {
        format!("https://auth.docker.io/token?scope={scope}&service=registry.docker.io")
    } else {
        format!("https://{host}/v2/token?scope={scope}&service={host}")
    }
}

/// The kubelet's `Failed` event and the `ErrImagePull` message, around containerd's error: for
/// an image that does not exist `rpc error: code = NotFound desc = failed to pull and unpack
/// image …: failed to resolve reference …: …: not found`; for a registry that refuses the node
/// `rpc error: code = Unknown desc = … failed to authorize: failed to fetch oauth token:
/// unexpected status from GET request to https://…/token?…: 403 Forbidden` (as kubelets report
/// it, e.g. nloui/paperless-mcp#10 for ghcr.io's token endpoint).
fn failure_message(image: &str, refusal: Refusal) -> String {
    // A malformed reference cannot be normalised; containerd quotes it as given.
    let reference = if image_parses(image) {
        normalized(image)
    } else {
        image.to_string()
    };
    let cause = match refusal {
        Refusal::NotFound => format!(
            "rpc error: code = NotFound desc = failed to pull and unpack image \"{reference}\": failed to resolve reference \"{reference}\": {reference}: not found"
        ),
        Refusal::Forbidden => format!(
            "rpc error: code = Unknown desc = failed to pull and unpack image \"{reference}\": failed to resolve reference \"{reference}\": failed to authorize: failed to fetch oauth token: unexpected status from GET request to {}: 403 Forbidden",
            token_url(&reference)
        ),
    };
    format!("Failed to pull image \"{image}\": {cause}")
}

/// A reference containerd can read at all (no upper case, spaces, empty tag or empty path part).
fn image_parses(image: &str) -> bool {
    !(image.is_empty()
        || image
            .chars()
            .any(|c| c.is_whitespace() || c.is_ascii_uppercase())
        || image.ends_with(':')
        || image.contains("//"))
}

pub(super) async fn pull_image(
    ctx: &PodCtx,
    container: &Value,
    views: &mut [ContainerView],
    i: usize,
) -> bool {
    let image = str_of(container, "image").to_string();
    let name = str_of(container, "name").to_string();
    let mut attempt = 0u32;
    loop {
        ctx.event(
            EventType::Normal,
            "Pulling",
            &format!("Pulling image \"{image}\""),
            "kubelet",
        );
        if !ctx.wait(Duration::from_secs(2), Duration::ZERO).await {
            return false;
        }
        let Some(refusal) = refusal(&image) else {
            let secs = 2.0 + f64::from(rand_byte()) / 100.0;
            ctx.event(EventType::Normal, "Pulled", &format!("Successfully pulled image \"{image}\" in {secs:.3}s ({secs:.3}s including waiting). Image size: 734003200 bytes."), "kubelet");
            ctx.event(
                EventType::Normal,
                "Created",
                &format!("Created container: {name}"),
                "kubelet",
            );
            ctx.event(
                EventType::Normal,
                "Started",
                &format!("Started container {name}"),
                "kubelet",
            );
            return true;
        };
        let failure = failure_message(&image, refusal);
        ctx.event(EventType::Warning, "Failed", &failure, "kubelet");
        ctx.event(
            EventType::Warning,
            "Failed",
            "Error: ErrImagePull",
            "kubelet",
        );
        views[i] = ContainerView::waiting(&name, &image, "ErrImagePull", Some(&failure));
        ctx.update(|p| set_containers(p, views));
        if !ctx.wait(Duration::from_secs(1), Duration::ZERO).await {
            return false;
        }
        let backoff = format!("Back-off pulling image \"{image}\"");
        views[i] = ContainerView::waiting(&name, &image, "ImagePullBackOff", Some(&backoff));
        ctx.update(|p| set_containers(p, views));
        ctx.event(EventType::Normal, "BackOff", &backoff, "kubelet");
        ctx.event(
            EventType::Warning,
            "Failed",
            "Error: ImagePullBackOff",
            "kubelet",
        );
        let delay = Duration::from_secs((10u64 << attempt.min(5)).min(300));
        attempt += 1;
        if !ctx.wait(delay, MIN_RETRY_WAIT).await {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::sync::Arc;

    use serde_json::json;
    use tokio::sync::broadcast::error::RecvError;

    use crate::kube::cluster::{ClusterRuntime, ClusterSpec, ClusterState};
    use crate::kube::lifecycle;
    use crate::kube::resources::Kind;

    async fn cluster() -> ClusterRuntime {
        let shared = crate::SimShared {
            clock: crate::clock::Clock::new(0.001),
            faults: Default::default(),
            auth: crate::auth::TokenAuthority::new(None).unwrap(),
            ca: Arc::new(crate::tls::CertificateAuthority::generate().unwrap()),
            replay_dir: None,
            run_images: Default::default(),
        };
        let spec = ClusterSpec::seed("p", "us-central1-a", "c");
        ClusterRuntime::start(spec, shared, 0).await.unwrap()
    }

    /// The pod's container once it waits for this reason; at most ten seconds.
    async fn waiting(state: &ClusterState, reason: &str) -> Value {
        let mut changes = state.store.subscribe();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let pod = state.store.get(Kind::Pod, "default", "train");
            let status = pod.and_then(|p| p.pointer("/status/containerStatuses/0").cloned());
            if let Some(status) = status.filter(|s| s["state"]["waiting"]["reason"] == reason) {
                return status;
            }
            match tokio::time::timeout_at(deadline, changes.recv()).await {
                Err(_) => panic!("the container never waited with {reason}"),
                Ok(Err(RecvError::Closed)) => panic!("the cluster stopped"),
                Ok(_) => {}
            }
        }
    }

    #[tokio::test]
    async fn a_forbidden_image_waits_in_err_image_pull_then_backs_off() {
        let runtime = cluster().await;
        let state = runtime.state();
        let image = "gcr.io/p/forbidden-trainer:v1";
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train"},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": image}]}});
        lifecycle::create(state, Kind::Pod, Some("default"), pod).unwrap();
        let pulling = waiting(state, "ErrImagePull").await;
        let message = pulling["state"]["waiting"]["message"].as_str().unwrap();
        assert_eq!(message, failure_message(image, Refusal::Forbidden));
        assert!(
            message.ends_with("&service=gcr.io: 403 Forbidden"),
            "{message}"
        );
        let (events, _) = state.store.list(Kind::Event, None, |e| {
            e["reason"] == "Failed" && e["message"] == message && e["type"] == "Warning"
        });
        assert_eq!(events.len(), 1);
        waiting(state, "ImagePullBackOff").await;
        runtime.shutdown();
    }

    #[test]
    fn an_image_that_does_not_exist_is_not_found_by_its_full_reference() {
        let image = "gcr.io/demo-project/does-not-exist:v1";
        assert!(!image_pullable(image));
        assert_eq!(
            failure_message(image, Refusal::NotFound),
            "Failed to pull image \"gcr.io/demo-project/does-not-exist:v1\": rpc error: code = \
             NotFound desc = failed to pull and unpack image \"gcr.io/demo-project/does-not-exist:v1\": \
             failed to resolve reference \"gcr.io/demo-project/does-not-exist:v1\": \
             gcr.io/demo-project/does-not-exist:v1: not found"
        );
        assert!(
            failure_message("nonexistent", Refusal::NotFound)
                .ends_with(": docker.io/library/nonexistent:latest: not found")
        );
    }

    #[test]
    fn a_forbidden_image_fails_to_authorize_with_a_403_from_the_token_endpoint() {
        let image = "us-docker.pkg.dev/demo-project/ml/forbidden-trainer:v2";
        assert_eq!(refusal(image), Some(Refusal::Forbidden));
        let message = failure_message(image, Refusal::Forbidden);
        assert!(
            message.ends_with(
                "failed to authorize: failed to fetch oauth token: unexpected status from GET \
                 request to https://us-docker.pkg.dev/v2/token?scope=repository%3Ademo-project%2Fml%2F\
                 forbidden-trainer%3Apull&service=us-docker.pkg.dev: 403 Forbidden"
            ),
            "{message}"
        );
        assert!(
            message.contains("rpc error: code = Unknown desc = failed to pull and unpack image")
        );
        let hub = failure_message("forbidden/app", Refusal::Forbidden);
        assert!(hub.contains("https://auth.docker.io/token?scope=repository%3Aforbidden%2Fapp%3Apull&service=registry.docker.io"), "{hub}");
    }

    #[test]
    fn other_images_pull() {
        assert!(image_pullable("gcr.io/demo-project/ml-training-job:latest"));
        assert!(!image_pullable("Upper/Case"));
        assert_eq!(normalized("nginx"), "docker.io/library/nginx:latest");
        assert_eq!(
            normalized("localhost:5000/a/b@sha256:00"),
            "localhost:5000/a/b@sha256:00"
        );
    }
}
