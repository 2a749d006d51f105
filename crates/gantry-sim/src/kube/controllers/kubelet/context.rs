//! What every step of one pod's task works with: the cluster, the pod's identity (a pod
//! recreated under the same name is another pod) and its stop signal.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::kube::cluster::ClusterState;
use crate::kube::events::EventType;
use crate::kube::meta;
use crate::kube::resources::Kind;

pub(super) struct PodCtx {
    pub state: Arc<ClusterState>,
    pub ns: String,
    pub name: String,
    pub uid: String,
    pub cancel: CancellationToken,
}

impl PodCtx {
    pub fn get(&self) -> Option<Arc<Value>> {
        self.state
            .store
            .get(Kind::Pod, &self.ns, &self.name)
            .filter(|p| meta::uid(p) == self.uid)
    }

    pub fn update(&self, f: impl FnOnce(&mut Value)) -> bool {
        self.state
            .store
            .update(Kind::Pod, &self.ns, &self.name, f)
            .is_ok()
    }

    pub fn event(&self, event_type: EventType, reason: &str, message: &str, component: &str) {
        if let Some(pod) = self.get() {
            self.state.events.record(
                &self.state.store,
                &pod,
                event_type,
                reason,
                message,
                component,
            );
        }
    }

    /// Sleeps a simulated delay; false when the pod is being stopped.
    pub async fn wait(&self, simulated: Duration, floor: Duration) -> bool {
        let wall = self.state.shared.clock.scaled(simulated).max(floor);
        tokio::select! {
            _ = self.cancel.cancelled() => false,
            _ = tokio::time::sleep(wall) => true,
        }
    }
}
