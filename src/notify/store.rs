//! Where the outbox is kept: a file in the state directory (a Gantry on a laptop, a VM, a
//! server), or a ConfigMap of the cluster (the watcher in it, whose pod — and its disk — may be
//! replaced at any time: the messages waiting and the keys already sent must outlive it).

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, PostParams};

use super::outbox::{Files, Outbox};

/// The key of the outbox's document in its ConfigMap.
pub const OUTBOX_KEY: &str = "outbox.json";
/// How long one write to the cluster may take before the round is tried again.
const WRITE_PATIENCE: Duration = Duration::from_secs(10);
/// Writes that lost to another writer in a row before the round gives up (and tries later).
const CONFLICTS_AT_MOST: usize = 5;

#[derive(Clone)]
pub enum Store {
    Files(Files),
    Cluster(ClusterStore),
}

/// The outbox in one ConfigMap, written with its `resourceVersion` (a write over a newer one is
/// refused, and the change made again on what is there). One writer at a time: the engine that
/// holds the recoverer's Lease is the only one that sends.
#[derive(Clone)]
pub struct ClusterStore {
    pub client: kube::Client,
    pub namespace: String,
    pub name: String,
    /// The object's labels when it is made.
    pub labels: std::collections::BTreeMap<String, String>,
}

impl Store {
    /// Where it is, for a person.
    pub fn label(&self) -> String {
        match self {
            Store::Files(files) => files.dir().display().to_string(),
            Store::Cluster(c) => format!("ConfigMap {}/{}", c.namespace, c.name),
        }
    }

    /// The outbox as it is now. Blocking: call it off the runtime's threads.
    pub fn read(&self) -> std::io::Result<Outbox> {
        match self {
            Store::Files(files) => files.read(),
            Store::Cluster(c) => c.block_on(c.read()).map(|(outbox, _)| outbox),
        }
    }

    /// Reads, changes and writes the outbox; `change` may run again on what another writer
    /// left. Blocking: call it off the runtime's threads.
    pub fn update<T: Send>(
        &self,
        mut change: impl FnMut(&mut Outbox) -> T + Send,
    ) -> std::io::Result<T> {
        match self {
            Store::Files(files) => files.update(change),
            Store::Cluster(c) => c.block_on(async {
                for _ in 0..CONFLICTS_AT_MOST {
                    let (mut outbox, there) = c.read().await?;
                    let before = outbox.clone();
                    let answer = change(&mut outbox);
                    if outbox == before {
                        return Ok(answer);
                    }
                    match c.write(&outbox, there).await {
                        Ok(true) => return Ok(answer),
                        Ok(false) => continue,
                        Err(e) => return Err(e),
                    }
                }
                Err(std::io::Error::other(format!(
                    "ConfigMap {}/{}: another writer kept writing",
                    c.namespace, c.name
                )))
            }),
        }
    }
}

/// How many messages wait in an outbox ConfigMap (`gantry watcher uninstall` keeps it until 0).
pub fn pending_in(map: &ConfigMap) -> usize {
    map.data
        .as_ref()
        .and_then(|d| d.get(OUTBOX_KEY))
        .and_then(|text| serde_json::from_str::<Outbox>(text).ok())
        .map_or(0, |o| o.pending.len())
}

impl ClusterStore {
    fn api(&self) -> Api<ConfigMap> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// Runs `work` to its end on a thread of its own (never a runtime's worker, where blocking
    /// would panic: a notifier dropped in async code writes its last messages through here).
    fn block_on<T: Send>(
        &self,
        work: impl std::future::Future<Output = std::io::Result<T>> + Send,
    ) -> std::io::Result<T> {
        let handle = tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
        // On one thread, that thread would wait here for a runtime only it drives.
        if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread {
            return Err(std::io::Error::other(
                "the cluster's outbox needs a runtime of several threads",
            ));
        }
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    handle.block_on(async {
                        tokio::time::timeout(WRITE_PATIENCE, work)
                            .await
                            .unwrap_or_else(|_| {
                                Err(std::io::Error::other("the cluster did not answer in time"))
                            })
                    })
                })
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the outbox's writer stopped")))
        })
    }

    /// The outbox and the object it was read from (None: there is none yet).
    async fn read(&self) -> std::io::Result<(Outbox, Option<ConfigMap>)> {
        let there = self
            .api()
            .get_opt(&self.name)
            .await
            .map_err(std::io::Error::other)?;
        let outbox = there
            .as_ref()
            .and_then(|m| m.data.as_ref())
            .and_then(|d| d.get(OUTBOX_KEY))
            .map(|text| {
                serde_json::from_str::<Outbox>(text).unwrap_or_else(|e| {
                    tracing::warn!(
                        "notify: the outbox in ConfigMap {} cannot be read ({e}); started again",
                        self.name
                    );
                    Outbox::default()
                })
            })
            .unwrap_or_default();
        Ok((outbox, there))
    }

    /// Writes `outbox` over `there` (or makes it); false when another writer came first.
    async fn write(&self, outbox: &Outbox, there: Option<ConfigMap>) -> std::io::Result<bool> {
        let mut outbox = outbox.clone();
        outbox.version = super::outbox::VERSION;
        let text = serde_json::to_string(&outbox).map_err(std::io::Error::other)?;
        let api = self.api();
        let result = match there {
            Some(mut map) => {
                map.data
                    .get_or_insert_with(Default::default)
                    .insert(OUTBOX_KEY.into(), text);
                api.replace(&self.name, &PostParams::default(), &map).await
            }
            None => {
                let map = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        labels: Some(self.labels.clone()),
                        ..Default::default()
                    },
                    data: Some([(OUTBOX_KEY.to_string(), text)].into()),
                    ..Default::default()
                };
                api.create(&PostParams::default(), &map).await
            }
        };
        match result {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(std::io::Error::other(e)),
        }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}
