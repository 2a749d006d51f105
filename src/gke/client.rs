//! [`Gke`]: the Container API through the official client, every request retried on 429 and 5xx
//! with jittered back-off, and tried once more with fresh credentials after a 401.

use std::collections::BTreeMap;
use std::future::Future;

use google_cloud_container_v1::client::ClusterManager;
use google_cloud_container_v1::model::{
    AcceleratorConfig, Cluster, NodePool, NodePoolAutoscaling, Operation,
};
use google_cloud_gax::error::Error as GaxError;
use google_cloud_gax::retry_policy::NeverRetry;
use tokio::sync::mpsc::UnboundedSender;

use super::error::http_status;
use super::pacing::retryable_status;
use super::{Auth, ClusterRef, DEFAULT_ENDPOINT, GkeError, ProvisionEvent, RequestRetry};

/// A connection to the Container API. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Gke {
    client: ClusterManager,
    auth: Auth,
    endpoint: String,
    retry: RequestRetry,
    events: Option<UnboundedSender<ProvisionEvent>>,
}

/// What a create request did.
#[derive(Debug, Clone)]
pub enum Created {
    /// GKE started this operation.
    Started(Box<Operation>),
    /// 409 ALREADY_EXISTS: the cluster is there.
    AlreadyExists,
}

/// What one `UpdateNodePool` request changes; None: left as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoolUpdate {
    pub machine_type: Option<String>,
    pub disk_type: Option<String>,
    pub disk_size_gb: Option<i64>,
    pub accelerators: Option<Vec<AcceleratorConfig>>,
}

impl PoolUpdate {
    /// Whether the request would change anything.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

impl Gke {
    /// A client for `endpoint` (default: Google's) with these credentials.
    pub async fn connect(auth: Auth, endpoint: Option<&str>) -> Result<Self, GkeError> {
        let endpoint = endpoint
            .map(|e| e.trim_end_matches('/').to_string())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
        let client = ClusterManager::builder()
            .with_endpoint(&endpoint)
            .with_credentials(auth.credentials())
            // Retries are Gantry's (below): 429 too, and a second chance after a 401.
            .with_retry_policy(NeverRetry)
            .build()
            .await
            .map_err(|e| GkeError::BadInput(format!("--gke-endpoint {endpoint}: {e}")))?;
        Ok(Self {
            client,
            auth,
            endpoint,
            retry: RequestRetry::default(),
            events: None,
        })
    }

    /// Retries with this policy instead of the default.
    pub fn with_retry(mut self, retry: RequestRetry) -> Self {
        self.retry = retry;
        self
    }

    /// Report retries on this channel (as [`ProvisionEvent::Retrying`]).
    pub fn with_events(mut self, events: UnboundedSender<ProvisionEvent>) -> Self {
        self.events = Some(events);
        self
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub fn auth(&self) -> &Auth {
        &self.auth
    }

    /// The cluster, or `None` when GKE says NOT_FOUND.
    pub async fn get_cluster(&self, target: &ClusterRef) -> Result<Option<Cluster>, GkeError> {
        let name = target.resource_name();
        let result = self
            .call("get cluster", |c| {
                c.get_cluster().set_name(name.clone()).send()
            })
            .await;
        match result {
            Ok(cluster) => Ok(Some(cluster)),
            Err(e) if http_status(&e) == Some(404) => Ok(None),
            Err(e) => Err(self.error(&e)),
        }
    }

    /// Asks GKE to create the cluster; 409 is [`Created::AlreadyExists`].
    pub async fn create_cluster(
        &self,
        target: &ClusterRef,
        cluster: Cluster,
    ) -> Result<Created, GkeError> {
        let parent = target.parent();
        let result = self
            .call("create cluster", |c| {
                c.create_cluster()
                    .set_parent(parent.clone())
                    .set_cluster(cluster.clone())
                    .send()
            })
            .await;
        match result {
            Ok(op) => Ok(Created::Started(Box::new(op))),
            Err(e) if http_status(&e) == Some(409) => Ok(Created::AlreadyExists),
            Err(e) => Err(self.error(&e)),
        }
    }

    /// Asks GKE to delete the cluster; `None` when it does not exist.
    pub async fn delete_cluster(&self, target: &ClusterRef) -> Result<Option<Operation>, GkeError> {
        let name = target.resource_name();
        let result = self
            .call("delete cluster", |c| {
                c.delete_cluster().set_name(name.clone()).send()
            })
            .await;
        match result {
            Ok(op) => Ok(Some(op)),
            Err(e) if http_status(&e) == Some(404) => Ok(None),
            Err(e) => Err(self.error(&e)),
        }
    }

    /// Asks GKE to set a node pool to `nodes` nodes per zone (`SetNodePoolSize`, what
    /// `gcloud container clusters resize --num-nodes` sends).
    pub async fn set_node_pool_size(
        &self,
        target: &ClusterRef,
        pool: &str,
        nodes: i32,
    ) -> Result<Operation, GkeError> {
        let name = pool_name(target, pool);
        self.call("set node pool size", |c| {
            c.set_node_pool_size()
                .set_name(name.clone())
                .set_node_count(nodes)
                .send()
        })
        .await
        .map_err(|e| self.error(&e))
    }

    /// Turns a node pool's autoscaler on within `bounds` (nodes per zone), or off (None).
    pub async fn set_node_pool_autoscaling(
        &self,
        target: &ClusterRef,
        pool: &str,
        bounds: Option<(i32, i32)>,
    ) -> Result<Operation, GkeError> {
        let name = pool_name(target, pool);
        let autoscaling = match bounds {
            Some((min, max)) => NodePoolAutoscaling::new()
                .set_enabled(true)
                .set_min_node_count(min)
                .set_max_node_count(max),
            None => NodePoolAutoscaling::new().set_enabled(false),
        };
        self.call("set node pool autoscaling", |c| {
            c.set_node_pool_autoscaling()
                .set_name(name.clone())
                .set_autoscaling(autoscaling.clone())
                .send()
        })
        .await
        .map_err(|e| self.error(&e))
    }

    /// Asks GKE to change a node pool's nodes (`UpdateNodePool`): each field given, in one
    /// request, and the pool's nodes recreated to carry them. Fields left out stay as they are
    /// (the node version and image type too, as gcloud leaves them out).
    pub async fn update_node_pool(
        &self,
        target: &ClusterRef,
        pool: &str,
        update: &PoolUpdate,
    ) -> Result<Operation, GkeError> {
        let name = pool_name(target, pool);
        self.call("update node pool", |c| {
            let mut request = c.update_node_pool().set_name(name.clone());
            if let Some(machine_type) = &update.machine_type {
                request = request.set_machine_type(machine_type);
            }
            if let Some(disk_type) = &update.disk_type {
                request = request.set_disk_type(disk_type);
            }
            if let Some(size) = update.disk_size_gb {
                request = request.set_disk_size_gb(size);
            }
            if let Some(accelerators) = &update.accelerators {
                request = request.set_accelerators(accelerators.clone());
            }
            request.send()
        })
        .await
        .map_err(|e| self.error(&e))
    }

    /// Asks GKE to add a node pool to the cluster (`CreateNodePool`).
    pub async fn create_node_pool(
        &self,
        target: &ClusterRef,
        pool: &NodePool,
    ) -> Result<Operation, GkeError> {
        let parent = target.resource_name();
        self.call("create node pool", |c| {
            c.create_node_pool()
                .set_parent(parent.clone())
                .set_node_pool(pool.clone())
                .send()
        })
        .await
        .map_err(|e| self.error(&e))
    }

    /// Asks GKE to delete a node pool, its nodes with it (`DeleteNodePool`).
    pub async fn delete_node_pool(
        &self,
        target: &ClusterRef,
        pool: &str,
    ) -> Result<Operation, GkeError> {
        let name = pool_name(target, pool);
        self.call("delete node pool", |c| {
            c.delete_node_pool().set_name(name.clone()).send()
        })
        .await
        .map_err(|e| self.error(&e))
    }

    /// Asks GKE to replace the cluster's resource labels (`SetLabels`). `fingerprint` is the
    /// `labelFingerprint` of the labels read: GKE refuses the request if they changed since.
    pub async fn set_labels(
        &self,
        target: &ClusterRef,
        labels: &BTreeMap<String, String>,
        fingerprint: &str,
    ) -> Result<Operation, GkeError> {
        let name = target.resource_name();
        self.call("set labels", |c| {
            c.set_labels()
                .set_name(name.clone())
                .set_resource_labels(labels.clone())
                .set_label_fingerprint(fingerprint)
                .send()
        })
        .await
        .map_err(|e| self.error(&e))
    }

    /// An operation of the cluster's location, by its short or full name.
    pub async fn get_operation(
        &self,
        target: &ClusterRef,
        operation: &str,
    ) -> Result<Operation, GkeError> {
        let name = target.operation_name(operation);
        self.call("get operation", |c| {
            c.get_operation().set_name(name.clone()).send()
        })
        .await
        .map_err(|e| self.error(&e))
    }

    /// The operations of the cluster's location that target it and have not finished.
    pub async fn running_operations(
        &self,
        target: &ClusterRef,
    ) -> Result<Vec<Operation>, GkeError> {
        let parent = target.parent();
        let listed = self
            .call("list operations", |c| {
                c.list_operations().set_parent(parent.clone()).send()
            })
            .await
            .map_err(|e| self.error(&e))?;
        let suffix = format!("/clusters/{}", target.name);
        Ok(listed
            .operations
            .into_iter()
            .filter(|op| {
                op.target_link.ends_with(&suffix)
                    && op.status != google_cloud_container_v1::model::operation::Status::Done
            })
            .collect())
    }

    fn error(&self, e: &GaxError) -> GkeError {
        GkeError::from_gax(e, &self.endpoint)
    }

    /// One request with Gantry's retries: 429, 5xx and unanswered requests again after a
    /// jittered wait; 401 once more after the credentials are refreshed.
    async fn call<T, F, Fut>(&self, request: &'static str, send: F) -> Result<T, GaxError>
    where
        F: Fn(&ClusterManager) -> Fut,
        Fut: Future<Output = Result<T, GaxError>>,
    {
        let mut attempt = 1;
        let mut backoff = self.retry.backoff();
        let mut refreshed = false;
        loop {
            // The client's futures are large; on the heap they do not overflow small stacks.
            let err = match Box::pin(send(&self.client)).await {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            let status = http_status(&err);
            if status == Some(401) && !refreshed {
                refreshed = true;
                tracing::debug!(request, "GKE refused the token; refreshing it");
                self.auth.invalidate();
                continue;
            }
            let transient = match status {
                Some(code) => retryable_status(code),
                None => err.is_io() || err.is_connect() || err.is_timeout() || err.is_transport(),
            };
            if !transient || attempt >= self.retry.attempts {
                return Err(err);
            }
            let wait = backoff.next_delay();
            let message = err
                .status()
                .map(|s| s.message.clone())
                .unwrap_or_else(|| err.to_string());
            tracing::debug!(request, ?status, attempt, ?wait, %message, "retrying a GKE request");
            if let Some(events) = &self.events {
                let _ = events.send(ProvisionEvent::Retrying {
                    request,
                    status,
                    attempt,
                    wait,
                    message,
                });
            }
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }
}

/// `projects/P/locations/L/clusters/C/nodePools/POOL`.
fn pool_name(target: &ClusterRef, pool: &str) -> String {
    format!("{}/nodePools/{pool}", target.resource_name())
}
