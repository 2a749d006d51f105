//! Changes worth a line of their own — what `gantry watch` prints and logs: the cluster's status,
//! an attempt seen or ended, a pod that failed and why, and what a command or an operation said.
//! Worked out from the model before an event and the event, so nothing is said twice.

use std::fmt;

use super::jobs::JobsModel;
use crate::gke::{ClusterStatus, ClusterSummary};
use crate::k8s::status::{AttemptPhase, AttemptSummary, PodSummary};
use crate::k8s::watch::{Change, JobWatchEvent};
use crate::sanitize::one_line;

#[derive(Debug, Clone, PartialEq)]
pub enum News {
    Cluster {
        name: String,
        status: ClusterStatus,
        message: String,
    },
    Attempt {
        name: String,
        phase: AttemptPhase,
        reason: Option<String>,
    },
    AttemptDeleted(String),
    PodFailed {
        pod: String,
        why: String,
    },
    /// A command's or an operation's outcome, as the status line shows it.
    Said(String),
    /// Something went wrong that Gantry is retrying (a watch, a log stream, a poll).
    Trouble(String),
    /// A pod's log stream ended (`ended`, `pod deleted`, `failed: …`): what it wrote is saved.
    LogEnded {
        pod: String,
        how: String,
    },
}

impl News {
    pub fn of_cluster(before: Option<&ClusterSummary>, now: &ClusterSummary) -> Option<News> {
        (before.map(|b| b.status) != Some(now.status)).then(|| News::Cluster {
            name: now.name.clone(),
            status: now.status,
            message: now.status_message.clone(),
        })
    }

    pub fn of_job(jobs: &JobsModel, event: &JobWatchEvent) -> Vec<News> {
        match event {
            JobWatchEvent::Job(Change::Applied(a) | Change::Listed(a)) => {
                let before = jobs.attempts.items.get(&a.name).map(|b| b.status);
                attempt(before, a).into_iter().collect()
            }
            JobWatchEvent::Job(Change::Deleted(a)) => vec![News::AttemptDeleted(a.name.clone())],
            JobWatchEvent::Pod(Change::Applied(p) | Change::Listed(p)) => {
                let was_failed = jobs.pods.items.get(&p.name).is_some_and(failed);
                (failed(p) && !was_failed)
                    .then(|| News::PodFailed {
                        pod: p.name.clone(),
                        why: why(p),
                    })
                    .into_iter()
                    .collect()
            }
            _ => Vec::new(),
        }
    }
}

fn attempt(before: Option<AttemptPhase>, now: &AttemptSummary) -> Option<News> {
    let changed = match before {
        None => true,
        Some(b) => b != now.status && (now.status.is_finished() || b == AttemptPhase::Pending),
    };
    changed.then(|| News::Attempt {
        name: now.name.clone(),
        phase: now.status,
        reason: now.reason.clone(),
    })
}

fn failed(p: &PodSummary) -> bool {
    p.phase == "Failed" || (p.terminated && p.exit_code.is_some_and(|c| c != 0))
}

fn why(p: &PodSummary) -> String {
    let mut why = p.status_word();
    if let Some(code) = p
        .exit_code
        .filter(|c| *c != 0 && !why.contains(&c.to_string()))
    {
        why.push_str(&format!(" (exit {code})"));
    }
    if let Some(m) = p.message.as_deref().filter(|m| !m.is_empty()) {
        why.push_str(": ");
        why.push_str(m);
    }
    why
}

impl fmt::Display for News {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            News::Cluster {
                name,
                status,
                message,
            } => {
                write!(f, "cluster {name} {}", status.name())?;
                if !message.is_empty() {
                    write!(f, ": {}", one_line(message))?;
                }
                Ok(())
            }
            News::Attempt {
                name,
                phase,
                reason,
            } => {
                write!(f, "attempt {name} {phase:?}")?;
                match reason {
                    Some(r) => write!(f, " ({})", one_line(r)),
                    None => Ok(()),
                }
            }
            News::AttemptDeleted(name) => write!(f, "attempt {name} deleted"),
            News::PodFailed { pod, why } => write!(f, "pod {pod} failed: {}", one_line(why)),
            News::Said(text) => write!(f, "{}", one_line(text)),
            News::Trouble(text) => write!(f, "trouble: {}", one_line(text)),
            News::LogEnded { pod, how } => write!(f, "log of {pod} {}", one_line(how)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(phase: &str, exit: Option<i32>) -> PodSummary {
        PodSummary {
            name: "job-0-abc".into(),
            namespace: "default".into(),
            job: "job".into(),
            attempt: Some(1),
            index: None,
            phase: phase.into(),
            reason: exit.map(|_| "OOMKilled".into()),
            message: None,
            exit_code: exit,
            restarts: 0,
            node: None,
            started: true,
            terminated: exit.is_some(),
            created: None,
            deleting: false,
            gpus: 0,
        }
    }

    #[test]
    fn a_pod_failing_is_told_once() {
        let mut jobs = JobsModel::default();
        let running = JobWatchEvent::Pod(Change::Applied(pod("Running", None)));
        assert!(News::of_job(&jobs, &running).is_empty());
        jobs.apply(running);
        let dead = JobWatchEvent::Pod(Change::Applied(pod("Failed", Some(137))));
        let news = News::of_job(&jobs, &dead);
        assert_eq!(news.len(), 1);
        assert_eq!(
            news[0].to_string(),
            "pod job-0-abc failed: OOMKilled (exit 137)"
        );
        jobs.apply(dead.clone());
        assert!(News::of_job(&jobs, &dead).is_empty());
    }

    fn cluster(status: crate::gke::ClusterStatus) -> crate::gke::ClusterSummary {
        crate::gke::ClusterSummary {
            name: "ml-gke-cluster".into(),
            project: "p".into(),
            location: "us-central1-a".into(),
            status,
            status_message: String::new(),
            node_count: 3,
            machine_type: "n1-standard-1".into(),
            endpoint: String::new(),
            version: String::new(),
            node_version: String::new(),
            node_pools: Vec::new(),
            locations: Vec::new(),
            create_time: None,
            labels: Default::default(),
        }
    }

    #[test]
    fn a_cluster_running_is_news_whether_its_follower_or_the_operations_saw_it_first() {
        use crate::engine::Event;
        use crate::engine::model::Model;
        use crate::gke::{ClusterStatus, ProvisionEvent};
        let running = |news: &[News]| {
            news.iter()
                .filter(|n| n.to_string() == "cluster ml-gke-cluster RUNNING")
                .count()
        };
        let mut model = Model::default();
        model.apply(Event::Cluster(cluster(ClusterStatus::Provisioning)));
        let first = model.apply(Event::Provision(ProvisionEvent::Cluster(cluster(
            ClusterStatus::Running,
        ))));
        let then = model.apply(Event::Cluster(cluster(ClusterStatus::Running)));
        assert_eq!(running(&first.news) + running(&then.news), 1);
    }
}
