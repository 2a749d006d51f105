//! Problems the status line shows while they last, each kept under where it came from: a source's recovery clears its own trouble and no other (a pod's log reconnecting says
//! nothing of GKE, and a watch coming back says nothing of a pod's log).

use crate::k8s::watch::JobWatchEvent;

/// Where a trouble comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TroubleSource {
    /// Reading the cluster from the GKE API.
    Gke,
    /// Connecting to the cluster's Kubernetes API.
    Cluster,
    /// A create or delete being followed (a retried request).
    Provision,
    /// One of the Job watchers: `jobs`, `pods` or `events`.
    Watch(&'static str),
    /// A pod's log stream.
    Logs(String),
    /// The followed attempt's training: the first metric that went NaN, infinite or jumped,
    /// kept in view until another attempt is followed (later ones are told as notices).
    Training,
}

impl TroubleSource {
    /// The watcher a Job watch event comes from.
    pub fn watch_of(event: &JobWatchEvent) -> TroubleSource {
        TroubleSource::Watch(match event {
            JobWatchEvent::Job(_) => "jobs",
            JobWatchEvent::Pod(_) => "pods",
            JobWatchEvent::Event(_) => "events",
        })
    }

    /// Where it comes from, as a notice names it: `gke`, `cluster`, `provision`, `watch jobs`,
    /// `logs of POD`, `training`.
    pub fn name(&self) -> String {
        match self {
            TroubleSource::Gke => "gke".into(),
            TroubleSource::Cluster => "cluster".into(),
            TroubleSource::Provision => "provision".into(),
            TroubleSource::Watch(what) => format!("watch {what}"),
            TroubleSource::Logs(pod) => format!("logs of {pod}"),
            TroubleSource::Training => "training".into(),
        }
    }

    /// Every Job watcher.
    pub fn watches() -> [TroubleSource; 3] {
        ["jobs", "pods", "events"].map(TroubleSource::Watch)
    }
}

/// The troubles present, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Troubles {
    present: Vec<(TroubleSource, String)>,
}

impl Troubles {
    /// Records (or replaces) the source's trouble; it becomes the newest. True when the source
    /// had none: a trouble begins.
    pub fn set(&mut self, source: TroubleSource, message: String) -> bool {
        let before = self.present.len();
        self.present.retain(|(s, _)| *s != source);
        let begins = self.present.len() == before;
        self.present.push((source, message));
        begins
    }

    /// The source is fine again; true if it had a trouble.
    pub fn clear(&mut self, source: &TroubleSource) -> bool {
        let before = self.present.len();
        self.present.retain(|(s, _)| s != source);
        self.present.len() != before
    }

    /// Forgets every pod's log trouble (the tail they came from is gone).
    pub fn clear_logs(&mut self) {
        self.present
            .retain(|(s, _)| !matches!(s, TroubleSource::Logs(_)));
    }

    /// Whether this pod's log has a trouble (a cheap test before clearing on every batch).
    pub fn has_logs_of(&self, pod: &str) -> bool {
        self.present
            .iter()
            .any(|(s, _)| matches!(s, TroubleSource::Logs(p) if p == pod))
    }

    pub fn has(&self, source: &TroubleSource) -> bool {
        self.present.iter().any(|(s, _)| s == source)
    }

    /// The source's trouble, if it has one.
    pub fn message_of(&self, source: &TroubleSource) -> Option<&str> {
        self.present
            .iter()
            .find(|(s, _)| s == source)
            .map(|(_, m)| m.as_str())
    }

    /// Every trouble's message, oldest first.
    pub fn messages(&self) -> impl Iterator<Item = &str> {
        self.present.iter().map(|(_, m)| m.as_str())
    }

    /// The newest trouble's message.
    pub fn newest(&self) -> Option<&str> {
        self.present.last().map(|(_, m)| m.as_str())
    }

    pub fn len(&self) -> usize {
        self.present.len()
    }

    pub fn is_empty(&self) -> bool {
        self.present.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_source_clears_only_its_own() {
        let mut troubles = Troubles::default();
        troubles.set(TroubleSource::Gke, "GKE: 503".into());
        troubles.set(TroubleSource::Logs("p-1".into()), "logs of p-1".into());
        troubles.set(TroubleSource::Watch("pods"), "watch pods: 410".into());
        assert_eq!(troubles.newest(), Some("watch pods: 410"));
        assert!(troubles.clear(&TroubleSource::Watch("pods")));
        assert!(!troubles.clear(&TroubleSource::Watch("jobs")));
        assert_eq!(troubles.newest(), Some("logs of p-1"));
        assert!(troubles.has_logs_of("p-1") && !troubles.has_logs_of("p-2"));
        troubles.clear_logs();
        assert_eq!(troubles.newest(), Some("GKE: 503"));
        // Said again: replaced, and the newest.
        troubles.set(TroubleSource::Cluster, "cannot reach".into());
        troubles.set(TroubleSource::Gke, "GKE: 429".into());
        assert_eq!((troubles.len(), troubles.newest()), (2, Some("GKE: 429")));
        troubles.clear(&TroubleSource::Gke);
        troubles.clear(&TroubleSource::Cluster);
        assert!(troubles.is_empty());
    }
}
