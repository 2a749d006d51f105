//! `gantry logs [--follow] [--pod P [--no-prefix]] [--previous]`: every pod of the current
//! attempt, each line prefixed `[pod] `: the container's bytes exactly in a pipe, a file or with
//! `--raw`; inert (`^[`) on a terminal. With `--follow`, exit when the attempt ends: 0 if it
//! succeeded, 1 if it failed.

use std::collections::HashSet;

use k8s_openapi::api::batch::v1::Job;
use kube::api::Api;
use kube::runtime::watcher;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::cli::LogsArgs;
use crate::k8s::logs::{LogTail, StreamEnd, TailEvent, TailOptions, TailTarget, logs_dir};
use crate::k8s::status::{AttemptPhase, AttemptSummary};
use crate::k8s::watch::{Change, watch_objects};
use crate::k8s::{self, attempts};
use crate::sanitize;
use crate::settings::Settings;

use super::connect::{connect, fail, job_error};

pub async fn run(args: LogsArgs, settings: &Settings) -> i32 {
    let t = match connect(settings).await {
        Ok(t) => t,
        Err(code) => return code,
    };
    let cfg = &t.config.job;
    let current = match k8s::current_attempt(&t.client, cfg).await {
        Ok(Some(job)) => job,
        Ok(None) => {
            return fail(
                &format!(
                    "the training Job {} has no attempt yet: start one with `gantry launch`",
                    cfg.name
                ),
                1,
            );
        }
        Err(e) => return job_error(&e),
    };
    let job = current.metadata.name.clone().unwrap_or_default();
    let follow = args.follow && !args.previous;
    let no_prefix = args.no_prefix;
    let tail = LogTail::follow(
        t.client.clone(),
        TailTarget {
            namespace: cfg.namespace.clone(),
            job: job.clone(),
            container: Some(cfg.container.clone()),
        },
        TailOptions {
            save_dir: if args.previous {
                None
            } else {
                logs_dir(&t.cluster_label, &job)
            },
            pod: args.pod.clone(),
            follow,
            previous: args.previous,
            max_streams: usize::from(args.max_log_requests),
            ..TailOptions::default()
        },
    );
    if !follow {
        let mut printer = Printer::new(!no_prefix);
        let mut tail = tail;
        while let Some(event) = tail.next().await {
            if !printer.show(&event) {
                break;
            }
        }
        return 0;
    }
    let printer = Printer::new(!no_prefix);
    follow_to_the_end(
        &t.client,
        &cfg.namespace,
        &job,
        args.pod.as_deref(),
        tail,
        printer,
    )
    .await
}

async fn follow_to_the_end(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    only_pod: Option<&str>,
    mut tail: LogTail,
    mut printer: Printer,
) -> i32 {
    let (job_tx, mut job_rx) = mpsc::channel(16);
    let cancel = CancellationToken::new();
    let _stop_watch = cancel.clone().drop_guard();
    tokio::spawn(watch_objects(
        Api::<Job>::namespaced(client.clone(), namespace),
        watcher::Config::default().fields(&format!("metadata.name={job}")),
        job_tx,
        cancel,
        |change| match change {
            Change::Listed(j) | Change::Applied(j) => Some(Some(AttemptSummary::of(&j))),
            Change::Deleted(_) => Some(None),
            _ => None,
        },
    ));
    let mut ended: HashSet<String> = HashSet::new();
    let mut outcome: Option<AttemptPhase> = None;
    // Once the attempt is over: the pods whose streams must end before we exit.
    let mut waiting_for: Option<HashSet<String>> = None;
    loop {
        if let Some(w) = &waiting_for
            && w.is_subset(&ended)
        {
            break;
        }
        tokio::select! {
            event = tail.next() => {
                let Some(event) = event else { break };
                if let TailEvent::PodEnded { pod, .. } = &event {
                    ended.insert(pod.clone());
                }
                if !printer.show(&event) {
                    return 0;
                }
            }
            summary = job_rx.recv(), if outcome.is_none() => {
                let phase = match summary {
                    Some(Some(s)) if s.status.is_finished() => s.status,
                    Some(Some(_)) => continue,
                    // Deleted under us, or the watch gave up.
                    Some(None) | None => AttemptPhase::Failed,
                };
                outcome = Some(phase);
                let started = match attempts::pods_of(client, namespace, job).await {
                    Ok(pods) => pods
                        .iter()
                        .map(crate::k8s::status::PodSummary::of)
                        .filter(|p| p.started && only_pod.is_none_or(|o| o == p.name))
                        .map(|p| p.name)
                        .collect(),
                    Err(e) => {
                        crate::errln!("gantry: {e}");
                        HashSet::new()
                    }
                };
                waiting_for = Some(started);
            }
        }
    }
    tail.handle().cancel();
    match outcome {
        Some(AttemptPhase::Succeeded) => 0,
        _ => 1,
    }
}

/// Writes `[pod] line` to stdout through the output's mode; notes on stderr.
struct Printer {
    prefix: bool,
    /// Pods in the middle of a long line (its fragments get no new prefix).
    mid_line: HashSet<String>,
    /// The pod watch failed and has not recovered yet.
    pods_stale: bool,
}

impl Printer {
    fn new(prefix: bool) -> Self {
        Self {
            prefix,
            mid_line: HashSet::new(),
            pods_stale: false,
        }
    }

    /// False when stdout is gone (a closed pipe): stop quietly.
    fn show(&mut self, event: &TailEvent) -> bool {
        match event {
            TailEvent::Lines { pod, lines } => {
                let prefix = if self.prefix {
                    format!("[{pod}] ")
                } else {
                    String::new()
                };
                let mode = crate::output::current().stdout;
                let mut mid_line = self.mid_line.contains(pod);
                let mut buf = Vec::with_capacity(
                    lines.iter().map(|l| prefix.len() + l.bytes.len() + 1).sum(),
                );
                for line in lines {
                    if !mid_line {
                        buf.extend_from_slice(prefix.as_bytes());
                    }
                    buf.extend_from_slice(&sanitize::apply(&line.bytes, mode));
                    mid_line = line.continues;
                    if !line.continues {
                        buf.push(b'\n');
                    }
                }
                if mid_line {
                    self.mid_line.insert(pod.clone());
                } else {
                    self.mid_line.remove(pod);
                }
                crate::output::write_stdout_as_is(&buf)
            }
            TailEvent::PodEnded {
                pod,
                why: StreamEnd::Failed(m),
            } => {
                crate::errln!("gantry: [{pod}] {m}");
                true
            }
            TailEvent::PodEnded {
                pod,
                why: StreamEnd::PodDeleted,
            } => {
                crate::errln!("gantry: [{pod}] the pod was deleted");
                true
            }
            TailEvent::SaveFailed { pod, error } => {
                crate::errln!("gantry: [{pod}] not saving its log: {error}");
                true
            }
            TailEvent::SavedByAnother { pod } => {
                crate::errln!(
                    "gantry: [{pod}] another Gantry is saving this pod's log: not saved here"
                );
                true
            }
            // Once per outage, not once per failed retry.
            TailEvent::WatchTrouble { error } => {
                if !std::mem::replace(&mut self.pods_stale, true) {
                    crate::errln!(
                        "gantry: watching the pods failed ({error}); pods that start meanwhile are followed once it is back"
                    );
                }
                true
            }
            TailEvent::WatchRecovered => {
                if std::mem::take(&mut self.pods_stale) {
                    crate::errln!("gantry: watching the pods again");
                }
                true
            }
            _ => true,
        }
    }
}
