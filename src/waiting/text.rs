//! What a diagnosis says: one line of cause, one of what to do, and a word for a narrow cell.

use jiff::Timestamp;

use super::{Cause, Waiting};
use crate::k8s::age::human_duration;

impl Waiting {
    /// The cause, in one line: "waiting for a GPU node: gpu-pool is scaling up from 0 (1 node
    /// asked 40s ago, usually 2–4 min)".
    pub fn detail(&self, now: Timestamp) -> String {
        let ago = |t: Option<Timestamp>| t.map(|t| human_duration(now.duration_since(t).as_secs()));
        let text = match &self.cause {
            Cause::ScalingUp {
                pool,
                from,
                to,
                asked,
            } => {
                let nodes = to.saturating_sub(*from).max(1);
                let noun = if nodes == 1 { "node" } else { "nodes" };
                match ago(*asked) {
                    Some(ago) => format!(
                        "waiting for a node: {pool} is scaling up from {from} ({nodes} {noun} asked {ago} ago, usually 2–4 min)"
                    ),
                    None => format!(
                        "waiting for a node: {pool} can scale up from {from} (the autoscaler decides within a minute)"
                    ),
                }
            }
            Cause::NoPool { resource } => format!("no node pool has {resource}"),
            Cause::PoolAtMax { pool, max } if *max > 0 => {
                format!("{pool} is at its autoscaling maximum ({max})")
            }
            Cause::PoolAtMax { pool, .. } => format!("{pool} is at its most nodes"),
            Cause::Quota { quota } => format!("GKE could not make a node: quota {quota} exceeded"),
            Cause::Stockout { zone } => format!(
                "zone {zone} has no capacity for this pool's machines now (ZONE_RESOURCE_POOL_EXHAUSTED)"
            ),
            Cause::Selector { selector } => format!("node selector {selector} matches no node"),
            Cause::Taint { taint } => format!("taint {taint} not tolerated"),
            Cause::NodeGoing { taint } if taint.is_empty() => {
                "no node is there now (its pool is being made again, or is at zero)".into()
            }
            Cause::NodeGoing { taint } => {
                format!(
                    "its node is going away ({taint}: a spot VM reclaimed, or a node drained or lost)"
                )
            }
            Cause::ImageNotFound { image, tries } => {
                let tries = if *tries == 1 {
                    "1 try".to_string()
                } else {
                    format!("{tries} tries")
                };
                format!("image {image} not found (ErrImagePull, {tries})")
            }
            Cause::ImageForbidden { image } => format!("not allowed to pull {image} (403)"),
            Cause::Creating { image } => {
                let so_far = ago(self.since).map_or(String::new(), |a| format!(", {a} so far"));
                match image {
                    Some(image) => format!("container is creating: pulling {image}{so_far}"),
                    None => format!("container is creating{so_far}"),
                }
            }
            Cause::Unknown { reason, message } if message.is_empty() => {
                format!("waiting: {reason}")
            }
            Cause::Unknown { reason, message } => format!("waiting: {reason}: {message}"),
        };
        let needs_gke = matches!(
            self.cause,
            Cause::PoolAtMax { .. }
                | Cause::Quota { .. }
                | Cause::Stockout { .. }
                | Cause::ScalingUp { .. }
        );
        let text = if needs_gke && !self.pools_known {
            format!("{text} (from the events alone: no GKE API here)")
        } else {
            text
        };
        crate::sanitize::one_line(&text)
    }

    /// What to do about it.
    pub fn hint(&self) -> String {
        match &self.cause {
            Cause::ScalingUp { .. } => "nothing to do: GKE is making the node".into(),
            Cause::NoPool { .. } => {
                "add a GPU pool (`[cluster.gpu-pool]`, then `gantry up`), or remove the GPU request"
                    .into()
            }
            Cause::PoolAtMax { .. } => {
                "raise the pool's `max-nodes`, or wait for a running pod to finish".into()
            }
            Cause::Quota { .. } => {
                "request more quota: https://console.cloud.google.com/iam-admin/quotas".into()
            }
            Cause::Stockout { .. } => {
                "try another zone or machine, or a spot pool; GKE keeps trying meanwhile".into()
            }
            Cause::Selector { .. } => {
                "fix the Job's node selector, or add a pool whose nodes carry that label".into()
            }
            Cause::Taint { .. } => {
                "add the toleration to the Job, or use a pool without that taint".into()
            }
            Cause::NodeGoing { .. } => {
                "nothing to do: GKE makes the node again (a minute or two)".into()
            }
            Cause::ImageNotFound { .. } => {
                "check the image's name and tag (`[job] image`, `--image`); it will not appear by waiting"
                    .into()
            }
            Cause::ImageForbidden { .. } => {
                "the node's service account needs read access to the registry (roles/artifactregistry.reader)"
                    .into()
            }
            Cause::Creating { .. } => "nothing to do: a large image takes minutes".into(),
            Cause::Unknown { .. } => "see the Events pane (or `kubectl describe pod`)".into(),
        }
    }

    /// A word for the pods pane's STATUS cell; None where Kubernetes' own word says as much.
    pub fn short(&self) -> Option<&'static str> {
        Some(match self.cause {
            Cause::ScalingUp { .. } => "ScalingUp",
            Cause::NoPool { .. } => "NoGPUPool",
            Cause::PoolAtMax { .. } => "PoolAtMax",
            Cause::Quota { .. } => "QuotaExceeded",
            Cause::Stockout { .. } => "Stockout",
            Cause::Selector { .. } => "NoMatchingNode",
            Cause::Taint { .. } => "Untolerated",
            Cause::NodeGoing { .. } => "NodeGoing",
            Cause::ImageNotFound { .. } => "ImageNotFound",
            Cause::ImageForbidden { .. } => "ImageForbidden",
            Cause::Creating { .. } | Cause::Unknown { .. } => return None,
        })
    }

    /// A few words for a headline: "1/2 waiting: no GPU node yet".
    pub fn phrase(&self) -> &'static str {
        match self.cause {
            Cause::ScalingUp { .. } => "no GPU node yet",
            Cause::NoPool { .. } => "no GPU pool",
            Cause::PoolAtMax { .. } => "pool at max",
            Cause::Quota { .. } => "GPU quota",
            Cause::Stockout { .. } => "zone stockout",
            Cause::Selector { .. } => "no node matches",
            Cause::Taint { .. } => "untolerated taint",
            Cause::NodeGoing { .. } => "node going away",
            Cause::ImageNotFound { .. } => "image not found",
            Cause::ImageForbidden { .. } => "image denied",
            Cause::Creating { .. } => "creating",
            Cause::Unknown { .. } => "pending",
        }
    }
}
