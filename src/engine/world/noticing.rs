//! Changes worth a line of their own — what `gantry watch` prints and logs: the cluster's status,
//! an attempt seen or ended, a pod that failed and why. Worked out from the model before an event
//! and the event, so nothing is said twice.

use super::jobs::JobsModel;
use crate::engine::notice::Notice;
use crate::gke::{ClusterStatus, ClusterSummary};
use crate::k8s::status::{AttemptPhase, AttemptSummary, PodSummary};
use crate::k8s::watch::{Change, JobWatchEvent};
use crate::sanitize::one_line;
use crate::vocabulary::{Kind, Severity};

/// The cluster's status, when it changed.
pub fn of_cluster(before: Option<&ClusterSummary>, now: &ClusterSummary) -> Option<Notice> {
    if before.map(|b| b.status) == Some(now.status) {
        return None;
    }
    let mut text = format!("cluster {} {}", now.name, now.status.name());
    if !now.status_message.is_empty() {
        text.push_str(&format!(": {}", one_line(&now.status_message)));
    }
    Some(match now.status {
        ClusterStatus::Error | ClusterStatus::Degraded => {
            Notice::new(Kind::Cluster, Severity::Critical, &now.name, text)
                .as_news(now.status.name())
                .with_detail("status", now.status.name())
        }
        _ => Notice::new(Kind::ClusterStatus, Severity::Info, &now.name, text),
    })
}

/// An attempt seen, ended or deleted, or a pod that failed, as a Job watcher's event tells it.
pub fn of_job(jobs: &JobsModel, event: &JobWatchEvent) -> Vec<Notice> {
    match event {
        JobWatchEvent::Job(Change::Applied(a) | Change::Listed(a)) => {
            let before = jobs.attempts.get(&a.name).map(|b| b.status);
            attempt(before, a).into_iter().collect()
        }
        JobWatchEvent::Job(Change::Deleted(a)) => vec![Notice::new(
            Kind::Attempt,
            Severity::Info,
            &a.name,
            format!("attempt {} deleted", a.name),
        )],
        JobWatchEvent::Pod(Change::Applied(p) | Change::Listed(p)) => {
            let was_failed = jobs.pods.get(&p.name).is_some_and(failed);
            // A preemption is told as one (`model::ends`), not as a failure.
            let preempted = p
                .fate
                .as_ref()
                .is_some_and(|f| f.class == crate::vocabulary::ends::Class::Preempted);
            // A pod being deleted ends as deleted (`model::ends`), whatever its exit code.
            (failed(p) && !was_failed && !preempted && !p.deleting)
                .then(|| {
                    let notice = Notice::new(
                        Kind::PodFailed,
                        Severity::Warning,
                        &p.name,
                        format!("pod {} failed: {}", p.name, one_line(&why(p))),
                    );
                    // Out of memory is news of its own: the next attempt will do the same.
                    let oom = p
                        .fate
                        .as_ref()
                        .is_some_and(|f| f.class == crate::vocabulary::ends::Class::Oom);
                    if oom {
                        Notice {
                            kind: Kind::Alert,
                            ..notice
                        }
                        .as_news(format!("oom/{}", p.name))
                        .with_detail("class", "oom")
                        .with_detail("pod", p.name.as_str())
                    } else {
                        notice
                    }
                })
                .into_iter()
                .collect()
        }
        _ => Vec::new(),
    }
}

fn attempt(before: Option<AttemptPhase>, now: &AttemptSummary) -> Option<Notice> {
    let changed = match before {
        None => true,
        Some(b) => b != now.status && (now.status.is_finished() || b == AttemptPhase::Pending),
    };
    if !changed {
        return None;
    }
    let mut text = format!("attempt {} {:?}", now.name, now.status);
    if let Some(r) = &now.reason {
        text.push_str(&format!(" ({})", one_line(r)));
    }
    let severity = match now.status {
        AttemptPhase::Failed => Severity::Critical,
        _ => Severity::Info,
    };
    let notice = Notice::new(Kind::Attempt, severity, &now.name, text);
    // A recovered attempt's end is shown; the recovery that ended it is what is sent.
    let recovered = now.status == AttemptPhase::Recovered;
    if !now.status.is_finished() || recovered || !recent(now.finished_at) {
        return Some(notice);
    }
    let mut notice = Notice {
        kind: Kind::AttemptEnded,
        ..notice
    }
    .as_news(&now.name)
    .with_detail("attempt", now.name.as_str())
    .with_detail("status", format!("{:?}", now.status));
    if let Some(reason) = &now.reason {
        notice = notice.with_detail("reason", one_line(reason));
    }
    Some(notice)
}

/// Whether an end is recent enough to be news: an engine that starts long after an attempt
/// ended shows it, but does not send it to anyone as if it just happened.
fn recent(at: Option<jiff::Timestamp>) -> bool {
    const NEWS_FOR_SECONDS: i64 = 3600;
    at.is_none_or(|at| jiff::Timestamp::now().as_second() - at.as_second() < NEWS_FOR_SECONDS)
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
            running_since: None,
            image: String::new(),
            node_selector: Vec::new(),
            fate: None,
            requests: Default::default(),
            deleted_by: None,
        }
    }

    #[test]
    fn a_pod_failing_is_told_once() {
        let mut jobs = JobsModel::default();
        let running = JobWatchEvent::Pod(Change::Applied(pod("Running", None)));
        assert!(of_job(&jobs, &running).is_empty());
        jobs.apply(running);
        let dead = JobWatchEvent::Pod(Change::Applied(pod("Failed", Some(137))));
        let news = of_job(&jobs, &dead);
        assert_eq!(news[0].kind, Kind::PodFailed);
        assert_eq!(news.len(), 1);
        assert_eq!(news[0].text, "pod job-0-abc failed: OOMKilled (exit 137)");
        jobs.apply(dead.clone());
        assert!(of_job(&jobs, &dead).is_empty());
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
    fn a_cluster_running_is_told_once_whether_its_follower_or_the_operations_saw_it_first() {
        use crate::engine::Report;
        use crate::engine::world::World;
        use crate::gke::{ClusterStatus, ProvisionEvent};
        let running = |told: &[Notice]| {
            told.iter()
                .filter(|n| n.to_string() == "cluster ml-gke-cluster RUNNING")
                .count()
        };
        let mut model = World::default();
        model.apply(Report::Cluster(cluster(ClusterStatus::Provisioning)));
        let first = model.apply(Report::Provision(ProvisionEvent::Cluster(cluster(
            ClusterStatus::Running,
        ))));
        let then = model.apply(Report::Cluster(cluster(ClusterStatus::Running)));
        assert_eq!(running(&first.told) + running(&then.told), 1);
    }
}
