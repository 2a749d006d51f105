//! GKE provisioning on the official Container API client (`google-cloud-container-v1`) and
//! `google-cloud-auth`: resolve where the cluster lives, build its request from the config, create
//! or adopt it while following the operation, delete it, and hand out a `kube::Client` for it.
//!
//! One file per job:
//! - [`target`]: which project, location and cluster (flags, config, environment, gcloud).
//! - [`auth`]: the OAuth access token (Application Default Credentials or `--access-token-file`).
//! - [`client`]: [`Gke`], the Container API with retries of 429/5xx and a refresh after 401.
//! - [`pacing`]: how refused requests are retried and running operations polled.
//! - [`spec`]: the cluster request from [`crate::config::ClusterConfig`].
//! - [`events`]: [`ProvisionEvent`], what the TUI and `gantry up --wait` show.
//! - [`provision`]: [`up`] and [`down`], following operations to their end.
//! - [`cost`]: the configured and the running cluster as the price list sees them.
//! - [`plan`]: what `up` would change, field by field, and how the Container API allows it.
//! - [`plan_text`]: a plan as people read it: `gantry plan`, the TUI's overlay and pane.
//! - [`apply`]: making a plan so, one operation at a time; what it cannot make, handed back.
//! - [`resize`]: node pools to zero nodes and back (`SetNodePoolSize`).
//! - [`fallback`]: the on-demand pool a run goes on when spot capacity deserts its pool.
//! - [`summary`]: [`ClusterSummary`], the cluster as `gantry status` and the TUI show it.
//! - [`status`]: [`ClusterStatus`], GKE's status names as an enum.
//! - [`cluster_client`]: a `kube::Client` for a RUNNING cluster, with a refreshing token.
//! - [`error`]: [`GkeError`], with the exit code and the fix for each failure.

pub mod apply;
pub mod auth;
pub mod client;
pub mod cluster_client;
pub mod cost;
pub mod error;
pub mod events;
pub mod fallback;
pub mod pacing;
pub mod plan;
pub mod plan_text;
pub mod provision;
pub mod resize;
pub mod spec;
pub mod status;
pub mod summary;
pub mod target;

pub use apply::{Applied, apply};
pub use auth::Auth;
pub use client::Gke;
pub use error::GkeError;
pub use events::{OperationKind, ProvisionEvent, Stage};
pub use pacing::{PollPolicy, RequestRetry};
pub use provision::{Begun, DownOutcome, UpHow, UpOutcome, begin_up, down, follow, up};
pub use status::ClusterStatus;
pub use summary::ClusterSummary;
pub use target::ClusterRef;

/// The Container API's public endpoint.
pub const DEFAULT_ENDPOINT: &str = "https://container.googleapis.com";

/// The scope of the token Gantry uses for the Container API and the cluster's API server.
pub const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
