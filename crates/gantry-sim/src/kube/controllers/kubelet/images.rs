//! Image pulls: the events of a pull that succeeds, and for an image that cannot exist the
//! `ErrImagePull` / `ImagePullBackOff` cycle with the kubelet's doubling back-off.

use std::time::Duration;

use serde_json::Value;

use super::MIN_RETRY_WAIT;
use super::context::PodCtx;
use super::pod::{rand_byte, str_of};
use crate::kube::events::EventType;
use crate::kube::pod_status::{ContainerView, set_containers};

/// The documented rule for images that cannot exist: a malformed reference, or one naming
/// `does-not-exist` or `nonexistent`.
pub fn image_pullable(image: &str) -> bool {
    let malformed = image.is_empty()
        || image
            .chars()
            .any(|c| c.is_whitespace() || c.is_ascii_uppercase())
        || image.ends_with(':')
        || image.contains("//");
    !(malformed || image.contains("does-not-exist") || image.contains("nonexistent"))
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
        if image_pullable(&image) {
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
        }
        let failure = format!(
            "Failed to pull image \"{image}\": rpc error: code = NotFound desc = failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": {image}: not found"
        );
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
