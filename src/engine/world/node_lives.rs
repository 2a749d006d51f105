//! The nodes' lives as this engine saw them, for the meter (`crate::meter`): a node listed or
//! added lives from its `creationTimestamp`; a node deleted ends when the watch said so. When
//! the watch fails (or the connection goes), the stretch it watched ends; nodes missing from the
//! list it makes when it comes back ended at the latest while it was away, and are counted until
//! it failed (a lower bound: the time away is unwatched, so the figure is partial anyway).

use std::collections::{BTreeMap, HashSet};

use jiff::Timestamp;

use crate::k8s::watch::Change;
use crate::meter::{NodeSeen, NodeSpan, PoolDisks, Stretch};

#[derive(Debug, Clone, PartialEq)]
struct Life {
    seen: NodeSeen,
    from: Timestamp,
    to: Option<Timestamp>,
}

#[derive(Debug, Default)]
pub struct NodeLives {
    /// Every node seen, alive or gone, by uid.
    lives: BTreeMap<String, Life>,
    /// When the nodes were watched.
    watched: Vec<Stretch>,
    /// Since when the watch has been away (failed, or disconnected), until its next full list.
    lost_at: Option<Timestamp>,
    /// The uids listed since a relist began.
    relisting: Option<HashSet<String>>,
    /// The pools' boot disks, as GKE reported them.
    pub disks: PoolDisks,
    /// How many lives began or ended so far.
    changes: u64,
}

impl NodeLives {
    /// A change the Node watch saw at `at`. Whether a figure changed course (a life began or
    /// ended, the watch listed): a node's status updates alone change nothing shown.
    pub fn apply(&mut self, change: Change<NodeSeen>, at: Timestamp) -> bool {
        match change {
            Change::Restarted => {
                self.relisting = Some(HashSet::new());
                false
            }
            Change::Listed(node) => {
                if let Some(listed) = self.relisting.as_mut() {
                    listed.insert(node.uid.clone());
                }
                self.seen(node, at)
            }
            Change::Synced => {
                let listed = self.relisting.take().unwrap_or_default();
                let ended = self.lost_at.unwrap_or(at);
                for (uid, life) in &mut self.lives {
                    if life.to.is_none() && !listed.contains(uid) {
                        life.to = Some(ended.max(life.from));
                        self.changes += 1;
                    }
                }
                let watching = self.watched.last().is_some_and(|s| s.to.is_none());
                if !watching {
                    self.watched.push(Stretch { from: at, to: None });
                }
                self.lost_at = None;
                true
            }
            Change::Applied(node) => self.seen(node, at),
            Change::Deleted(node) => {
                let uid = node.uid.clone();
                self.seen(node, at);
                let Some(life) = self.lives.get_mut(&uid).filter(|l| l.to.is_none()) else {
                    return false;
                };
                life.to = Some(at.max(life.from));
                self.changes += 1;
                true
            }
            Change::Trouble(_) => {
                self.lost(at);
                false
            }
            Change::Recovered => false,
        }
    }

    /// The watch stopped at `at` (it failed, or the connection went).
    pub fn lost(&mut self, at: Timestamp) {
        if self.lost_at.is_some() {
            return;
        }
        if let Some(open) = self.watched.last_mut().filter(|s| s.to.is_none()) {
            open.to = Some(at.max(open.from));
            self.lost_at = Some(at);
        }
    }

    /// A node as seen now; whether its life begins here.
    fn seen(&mut self, node: NodeSeen, at: Timestamp) -> bool {
        match self.lives.get_mut(&node.uid) {
            Some(life) => {
                life.seen = node;
                false
            }
            None => {
                self.changes += 1;
                let from = node.created.unwrap_or(at);
                self.lives.insert(
                    node.uid.clone(),
                    Life {
                        seen: node,
                        from,
                        to: None,
                    },
                );
                true
            }
        }
    }

    /// Whether the nodes have been listed (before that, nothing is known of them).
    pub fn listed(&self) -> bool {
        !self.watched.is_empty()
    }

    /// Whether the watch is up now.
    pub fn watching(&self) -> bool {
        self.listed() && self.lost_at.is_none()
    }

    /// Each node's life, priced; while the watch is away, a node not known to be gone is
    /// counted until it went away.
    pub fn spans(&self) -> Vec<NodeSpan> {
        self.lives
            .values()
            .map(|life| NodeSpan {
                name: life.seen.name.clone(),
                per_hour: life.seen.per_hour(&self.disks),
                from: life.from,
                to: life.to.or(self.lost_at),
            })
            .collect()
    }

    /// When the nodes were watched.
    pub fn watched(&self) -> &[Stretch] {
        &self.watched
    }

    /// How many lives began or ended so far: what changed the meter's slope.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// How many nodes are alive as far as this engine knows.
    pub fn alive(&self) -> usize {
        self.lives.values().filter(|l| l.to.is_none()).count()
    }
}
