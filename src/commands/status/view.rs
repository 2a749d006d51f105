//! `gantry status` for a person: the cluster, then the training Job as an operator needs it at a
//! glance — each attempt with its status, reason, failures against `backoffLimit`, start and
//! duration; the current attempt's pods as `kubectl get pods` and the TUI's pods pane show them;
//! where the logs are saved; and the next command to run. Every line fits in 80 columns. A pure
//! function of the report and the time, so it is tested at a fixed `now`.

use std::path::Path;

use jiff::Timestamp;

use super::job::{AttemptStatus, JobStatus};
use super::{ClusterReport, GkeCluster, StatusReport};
use crate::gke::ClusterStatus;
use crate::gke::cost::RunningCost;
use crate::k8s::cluster_info::{ContextStatus, ContextSummary};
use crate::k8s::status::{AttemptPhase, PodSummary};
use crate::sanitize::one_line;
use crate::ui::widgets::{age, col, fit, short_name, short_node};

/// The terminal width the view is laid out for.
pub const WIDTH: usize = 80;

/// The report as lines of at most `WIDTH` columns.
pub fn render(report: &StatusReport, now: Timestamp) -> Vec<String> {
    let mut out = Vec::new();
    let (name, shows_job, cost) = match &report.cluster {
        ClusterReport::Gke(c) => {
            cluster(&mut out, c, now);
            let s = &c.summary;
            let cost = c.cost.as_ref().map(|cost| (s.node_count, cost));
            (s.name.as_str(), s.status != ClusterStatus::NotFound, cost)
        }
        ClusterReport::Context(c) => {
            context(&mut out, c);
            (c.name.as_str(), c.status == ContextStatus::Running, None)
        }
    };
    match &report.job {
        Some(job) => {
            out.push(String::new());
            let place = Place {
                cluster: name,
                logs: report.logs_dir.as_deref(),
                cost,
                run_cost: report.run_cost.as_ref(),
                waiting: &report.waiting,
                gpus: report.gpus.as_ref(),
            };
            job_lines(&mut out, job, &place, now);
        }
        None if shows_job => {
            out.push(String::new());
            out.push("job       not readable until the cluster's API answers".into());
        }
        None => {}
    }
    out.into_iter().map(|l| fit(&l, WIDTH)).collect()
}

/// Where the Job runs: the cluster's name, where its logs are saved, and what the cluster costs
/// with how many nodes (GKE only).
struct Place<'a> {
    cluster: &'a str,
    logs: Option<&'a Path>,
    cost: Option<(u32, &'a RunningCost)>,
    /// What the run cost so far, or why that is not known.
    run_cost: Option<&'a Result<crate::meter::RunCost, String>>,
    /// Why each waiting pod waits.
    waiting: &'a std::collections::BTreeMap<String, crate::waiting::Waiting>,
    /// What the Job's GPUs are doing, when a pod asks for some.
    gpus: Option<&'a crate::k8s::gpus::GpuRead>,
}

fn cluster(out: &mut Vec<String>, gke: &GkeCluster, now: Timestamp) {
    let c = &gke.summary;
    out.push(format!(
        "cluster   {} ({}/{})",
        c.name, c.project, c.location
    ));
    out.push(format!("status    {}", c.status.name()));
    if !c.status_message.is_empty() {
        out.push(format!("message   {}", one_line(&c.status_message)));
    }
    if c.status == ClusterStatus::NotFound {
        out.push("next      gantry up --wait   (create it)".into());
        return;
    }
    out.push(format!(
        "nodes     {}",
        super::nodes::describe(&gke.nodes_by_machine_type)
    ));
    for pool in &c.node_pools {
        let mut line = format!(
            "pool      {} {} {}",
            pool.name, pool.status, pool.machine_type
        );
        if pool.spot {
            line.push_str(" spot");
        }
        if let Some(a) = &pool.accelerator {
            line.push(' ');
            line.push_str(a);
        }
        out.push(line);
    }
    if !c.version.is_empty() {
        out.push(format!("version   {}", c.version));
    }
    if !c.endpoint.is_empty() {
        out.push(format!("endpoint  https://{}", c.endpoint));
    }
    if let Some(cost) = &gke.cost {
        out.push(cost_line(cost, gke.so_far.as_ref(), c.create_time, now));
    }
}

/// "cost      ≈ $0.28/h, $207/month; at least $0.64 since it was created 2h 15m ago": the
/// price now, and what its nodes and fee cost since its creation (`meter`).
fn cost_line(
    cost: &RunningCost,
    so_far: Option<&crate::meter::Figure>,
    created: Option<Timestamp>,
    now: Timestamp,
) -> String {
    let mut line = format!("cost      {}", crate::gke::cost::describe(&cost.per_hour));
    if let (Some(so_far), Some(created)) = (so_far, created) {
        line.push_str(&format!(
            "; {} since it was created {} ago",
            crate::meter::words(so_far.usd, so_far.partial),
            age(Some(created), now)
        ));
    }
    line
}

fn context(out: &mut Vec<String>, c: &ContextSummary) {
    out.push(format!("context   {} ({})", c.name, c.server));
    out.push(format!("status    {}", c.status.name()));
    if let Some(error) = &c.error {
        out.push(format!("error     {}", one_line(error)));
        return;
    }
    out.push(format!("nodes     {}", c.node_count));
    out.push(format!("version   {}", c.version));
    out.push(format!(
        "cost      unavailable: {}",
        crate::meter::NOT_PRICED_ON_A_CONTEXT
    ));
}

fn job_lines(out: &mut Vec<String>, job: &JobStatus, place: &Place, now: Timestamp) {
    let count = match job.attempts.len() {
        1 => "1 attempt".to_string(),
        n => format!("{n} attempts"),
    };
    out.push(format!(
        "job       {} in {}: {count}",
        job.name, job.namespace
    ));
    if let Some(run) = &job.run_id {
        let recoveries = match job.recoveries.unwrap_or(0) {
            0 => "no recovery".to_string(),
            1 => "1 recovery".to_string(),
            n => format!("{n} recoveries"),
        };
        out.push(format!("run       {run} ({recoveries})"));
    }
    if let Some(holder) = &job.recoverer {
        let silent = if job.recoverer_silent {
            " (looks silent: no renewal for longer than the Lease's 15 s)"
        } else {
            ""
        };
        out.push(format!("recoverer {}{silent}", one_line(holder)));
    }
    if let Some(w) = &job.watcher {
        out.push(format!(
            "watched   in the cluster by {}{}",
            one_line(&w.pod),
            w.version
                .as_ref()
                .map(|v| format!(" ({})", one_line(v)))
                .unwrap_or_default()
        ));
    }
    if let Some(cost) = place.run_cost {
        out.push(super::cost::run_line(cost, now));
    }
    if let Some(error) = &job.error {
        out.push(format!("error     {}", one_line(error)));
        return;
    }
    let Some(current) = job.current() else {
        out.push("next      gantry launch   (start the first attempt)".into());
        return;
    };
    out.push(format!(
        "  {}{}{}{}{}TOOK",
        col("ATTEMPT", 24),
        col("STATUS", 11),
        col("REASON", 22),
        col("FAILED", 8),
        col("STARTED", 9),
    ));
    for a in &job.attempts {
        out.push(attempt_line(a, now));
        // The code it ran, under it: retries and recoveries keep their attempt's code.
        if let Some(code) = &a.summary.code {
            out.push(format!("    code {}", code.said()));
        }
    }
    if let Some((nodes, cost)) = place.cost {
        out.push(String::new());
        super::usage::attempt_costs(out, &job.attempts, nodes, &cost.per_hour, now);
    }
    out.push(String::new());
    pods(out, current, place, now);
    ends(out, current, now);
    out.push(String::new());
    if let Some(dir) = place.logs {
        out.push(format!("logs      {}", dir.display()));
    }
    out.push(next(current));
}

fn attempt_line(a: &AttemptStatus, now: Timestamp) -> String {
    let s = &a.summary;
    let status = if s.deleting {
        "Deleting"
    } else {
        s.status.word()
    };
    let took = match (s.start_time, s.completion_time) {
        (Some(start), Some(end)) => crate::k8s::age::human_duration((end - start).get_seconds()),
        (Some(start), None) if !s.status.is_finished() => {
            crate::k8s::age::human_duration((now - start).get_seconds())
        }
        _ => "-".into(),
    };
    let started = match s.start_time {
        Some(_) => format!("{} ago", age(s.start_time, now)),
        None => "-".into(),
    };
    // A recovered attempt says why and what followed it.
    let reason = match (&s.recovered_into, s.ended_by) {
        (Some(into), Some(by)) => format!("{by} → {into}"),
        (Some(into), None) => format!("→ {into}"),
        _ => one_line(s.reason.as_deref().unwrap_or("")),
    };
    format!(
        "  {}{}{}{}{}{took}",
        col(&s.name, 24),
        col(status, 11),
        col(&reason, 22),
        col(&failed_and_preempted(a), 8),
        col(&started, 9),
    )
}

/// `1/2`: failures against `backoffLimit`; `0/2 ⟳3` with the preemptions the Job absorbed.
fn failed_and_preempted(a: &AttemptStatus) -> String {
    let failed = format!("{}/{}", a.summary.failed, a.backoff_limit);
    match a.ends.preemptions {
        0 => failed,
        n => format!("{failed} ⟳{n}"),
    }
}

/// How the attempt's pods ended, oldest first, with what each cost.
fn ends(out: &mut Vec<String>, a: &AttemptStatus, now: Timestamp) {
    let e = &a.ends;
    if e.pod_ends.is_empty() && e.unexplained == 0 {
        return;
    }
    let attempt = &a.summary.name;
    out.push(String::new());
    match e.preemptions {
        0 => out.push(format!("pod ends of {attempt}")),
        n => out.push(format!(
            "pod ends of {attempt} ({n} preempted, not counted as failures)"
        )),
    }
    out.push(format!(
        "  {}{}{}{}ENDED",
        col("CLASS", 13),
        col("POD", 14),
        col("RAN", 9),
        col("COST", 10),
    ));
    for end in &e.pod_ends {
        let cost = end
            .cost
            .map_or_else(|| "?".to_string(), crate::pricing::format::usd);
        let ended = match end.at {
            Some(_) => format!("{} ago", age(end.at, now)),
            None => "-".into(),
        };
        // An end read back from Events knows neither when nor how long.
        let ran = match end.at {
            None if end.ran_seconds == 0 => "-".to_string(),
            _ => crate::k8s::age::human_duration(i64::try_from(end.ran_seconds).unwrap_or(0)),
        };
        out.push(format!(
            "  {}{}{}{}{ended}",
            col(end.class.name(), 13),
            col(short_name(&end.pod, attempt), 14),
            col(&ran, 9),
            col(&cost, 10),
        ));
        out.push(format!(
            "    {}",
            col(&one_line(&end.detail), 76).trim_end()
        ));
    }
    if e.partial {
        out.push(
            "  partial: no Gantry watched all of this attempt; what it did not see was".into(),
        );
        out.push(
            "  read back from the cluster's Events (kept about 1 h), without time or cost".into(),
        );
    }
    if e.unexplained > 0 {
        out.push(format!(
            "  {} pod(s) the Job made are gone with no end known",
            e.unexplained
        ));
    }
}

fn pods(out: &mut Vec<String>, a: &AttemptStatus, place: &Place, now: Timestamp) {
    let cluster = place.cluster;
    let attempt = &a.summary.name;
    if a.pods.is_empty() {
        out.push(format!("pods of {attempt}: none yet"));
        return;
    }
    match crate::waiting::attempt_time_to_running(&a.pods) {
        Some(secs) => out.push(format!(
            "pods of {attempt} (all ran {} after the first was created)",
            crate::k8s::age::human_duration(secs)
        )),
        None => out.push(format!("pods of {attempt}")),
    }
    out.push(format!(
        "  {}{}{}{}{}AGE",
        col("NAME", 14),
        col("READY", 6),
        col("STATUS", 17),
        col("RST", 4),
        col("NODE", 28),
    ));
    for p in &a.pods {
        out.push(format!(
            "  {}{}{}{}{}{}",
            col(short_name(&p.name, attempt), 14),
            col(p.ready(), 6),
            col(&one_line(&p.status_word()), 17),
            col(&p.restarts.to_string(), 4),
            col(
                short_node(p.node.as_deref().unwrap_or("<none>"), cluster),
                28
            ),
            age(p.created, now),
        ));
        // A waiting pod: why, and what to do; else what went wrong, if anything.
        if let Some(w) = place.waiting.get(&p.name) {
            out.push(format!("    waiting: {}", w.detail(now)));
            out.push(format!("    next: {}", w.hint()));
        } else if let Some(why) = why(p) {
            out.push(format!("    {why}"));
        }
        if let Some(read) = place.gpus.filter(|_| p.gpus > 0 && !p.terminated) {
            for gpu in super::gpus::of_pod(read, p) {
                out.push(format!("    {}", one_line(&crate::ui::gpus::one(gpu))));
            }
        }
    }
    if let Some(crate::k8s::gpus::GpuRead::Unavailable(why)) = place.gpus {
        out.push(format!("  {why}"));
    }
}

/// Why a pod is not well, on its own line under it: the exit code and the message the kubelet
/// or the container left (a termination message, an image pull error, an unschedulable pod).
fn why(p: &PodSummary) -> Option<String> {
    let message = p.message.as_deref().map(one_line).filter(|m| !m.is_empty());
    // `Error(1)` and `ExitCode:2` say the code already.
    let code = p
        .exit_code
        .filter(|c| *c != 0 && !p.status_word().contains(&c.to_string()));
    match (code, message) {
        (Some(code), Some(m)) => Some(format!("exit {code}: {m}")),
        (None, Some(m)) if p.exit_code.is_some_and(|c| c != 0) => {
            Some(format!("exit {}: {m}", p.exit_code.unwrap_or_default()))
        }
        (Some(code), None) => Some(format!("exit {code}")),
        (None, Some(m)) => Some(m),
        (None, None) => None,
    }
}

/// The command that moves things on from here.
fn next(a: &AttemptStatus) -> String {
    let (command, why) = match a.summary.status {
        AttemptPhase::Pending | AttemptPhase::Running => ("gantry logs -f", "follow it to the end"),
        AttemptPhase::Failed => ("gantry retry", "start the next attempt"),
        AttemptPhase::Recovered => ("gantry retry", "its recovery made no next attempt"),
        AttemptPhase::Succeeded => ("gantry logs", "read what it printed"),
    };
    format!("next      {command}   ({why})")
}
