//! The idle-GPU guard: GPUs are paid for by the hour whether they compute or not. A GPU of a
//! running training pod that every counter its exporter has says is busy less than
//! `gpu-idle-below` percent (and that draws no working power, where its limit is known: see
//! `dcgm::Gpu::idle`) for `gpu-idle-after` is told once per idle spell — naming the pod, the
//! GPU, the counter judged and what the GPU costs an hour — as news. With `gpu-idle-action =
//! "end-attempt"` the recoverer ends the attempt as a stalled one is ended (a recovery, bounded
//! by `max-recoveries`), through the gate as `guard`. A GPU its exporter maps to no pod is
//! never judged: on DRA nodes a busy GPU can have no pod label.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;

use super::{Decisions, Doing, Settings};
use crate::config::StallAction;
use crate::engine::clock::Now;
use crate::engine::notice::Notice;
use crate::engine::world::World;
use crate::engine::world::gpus::GpuState;
use crate::k8s::age::human_duration;
use crate::k8s::run::Run;
use crate::pricing::format::usd;
use crate::vocabulary::attempt::EndedBy;
use crate::vocabulary::{Kind, Severity};

/// One GPU of one pod, idle since a reading.
#[derive(Debug, Clone, PartialEq)]
struct Spell {
    since: Timestamp,
    told: bool,
}

/// The idle spells going on, by (pod, GPU UUID, MIG instance), and the reading last judged.
#[derive(Debug, Default)]
pub struct GpuIdle {
    spells: BTreeMap<(String, String, String), Spell>,
    judged: Option<Timestamp>,
}

impl super::Policy for GpuIdle {
    fn principal(&self) -> &'static str {
        "guard"
    }

    fn decide(
        &mut self,
        world: &World,
        doing: &Doing,
        settings: &Settings,
        _now: Now,
    ) -> Decisions {
        let guards = &settings.guards;
        let GpuState::Known(reading) = &world.gpus.state else {
            if matches!(world.gpus.state, GpuState::Unknown) {
                self.spells.clear();
                self.judged = None;
            }
            return Decisions::default();
        };
        if !guards.watches_gpus() || self.judged == Some(reading.at) {
            return Decisions::default();
        }
        self.judged = Some(reading.at);
        let after = guards.gpu_idle_after();
        let mut decided = Decisions::default();
        let mut seen = Vec::new();
        for (node, gpu) in reading.gpus() {
            for pod in &gpu.pods {
                let Some(summary) = world.jobs.pods.get(&pod.pod) else {
                    continue;
                };
                if summary.namespace != pod.namespace || summary.phase != "Running" {
                    continue;
                }
                let Some(activity) = gpu.idle(guards.gpu_idle_below) else {
                    continue;
                };
                let instance = gpu.mig.as_ref().map(|m| m.instance.clone());
                let key = (
                    pod.pod.clone(),
                    gpu.uuid.clone(),
                    instance.unwrap_or_default(),
                );
                seen.push(key.clone());
                let spell = self.spells.entry(key).or_insert(Spell {
                    since: reading.at,
                    told: false,
                });
                let idle_for = age(reading.at, spell.since);
                if spell.told || idle_for < after {
                    continue;
                }
                spell.told = true;
                let what = GpuWords {
                    pod: &pod.pod,
                    index: gpu.index,
                    model: &gpu.model,
                    percent: activity.percent,
                    signal: activity.signal.name(),
                    idle_for,
                    per_hour: node.per_gpu_hour,
                };
                decided.notices.push(what.notice(
                    spell.since,
                    &gpu.uuid,
                    guards.gpu_idle_action.name(),
                ));
                if guards.gpu_idle_action == StallAction::EndAttempt {
                    end(world, doing, settings, summary, what.text(), &mut decided);
                }
            }
        }
        // Judged by the readings' own times: a spell ends with the first reading it is not in.
        self.spells.retain(|k, _| seen.contains(k));
        decided
    }
}

/// What is said of an idle GPU.
struct GpuWords<'a> {
    pod: &'a str,
    index: u32,
    model: &'a str,
    percent: f64,
    signal: &'static str,
    idle_for: Duration,
    per_hour: Option<f64>,
}

impl GpuWords<'_> {
    fn text(&self) -> String {
        let cost = match self.per_hour {
            Some(p) => format!("it costs {}/h", usd(p)),
            None => "its price is unknown".to_string(),
        };
        let model = if self.model.is_empty() {
            String::new()
        } else {
            format!(" ({})", crate::sanitize::one_line(self.model))
        };
        format!(
            "pod {} GPU {}{model} idle for {}: {:.0}% busy ({}); {cost}",
            self.pod,
            self.index,
            human_duration(self.idle_for.as_secs() as i64),
            self.percent,
            self.signal,
        )
    }

    fn notice(&self, since: Timestamp, uuid: &str, action: &str) -> Notice {
        let notice = Notice::new(Kind::GpuIdle, Severity::Warning, self.pod, self.text())
            .as_news(format!("{}/{uuid}/{}", self.pod, since.as_second()))
            .with_detail("pod", self.pod)
            .with_detail("gpu", self.index)
            .with_detail("uuid", uuid)
            .with_detail("busyPercent", (self.percent * 10.0).round() / 10.0)
            .with_detail("signal", self.signal)
            .with_detail("idleFor", self.idle_for.as_secs())
            .with_detail("action", action);
        match self.per_hour {
            Some(p) => notice.with_detail("perHour", crate::pricing::format::round_usd(p)),
            None => notice,
        }
    }
}

/// The idle GPU's attempt ended as a stalled one is (`stall-action = "end-attempt"`), by the
/// recoverer alone, once.
fn end(
    world: &World,
    doing: &Doing,
    settings: &Settings,
    pod: &crate::k8s::status::PodSummary,
    why: String,
    decided: &mut Decisions,
) {
    if !world.is_recoverer() || !settings.may_act || doing.recovering.is_some() {
        return;
    }
    let Some(attempt) = world.jobs.active_attempt() else {
        return;
    };
    let of_it = world
        .jobs
        .pods
        .get(&pod.name)
        .is_some_and(|p| p.job == attempt.name);
    let ended = doing.ended.contains(&attempt.name)
        || decided.commands.iter().any(|c| {
            matches!(c, crate::engine::Command::Recover { attempt: a, .. } | crate::engine::Command::EndRun { attempt: a, .. } if *a == attempt.name)
        });
    if !of_it || ended {
        return;
    }
    let run = attempt.run.clone().unwrap_or_else(Run::unrecorded);
    let why = format!("{} has an idle GPU: {why}", attempt.name);
    let command = super::recovery::restart_or_end(
        &attempt.name,
        &run,
        why,
        settings.max_recoveries,
        EndedBy::GpuIdle,
    );
    decided.commands.push(command);
}

fn age(now: Timestamp, since: Timestamp) -> Duration {
    Duration::try_from(now.duration_since(since)).unwrap_or_default()
}

#[cfg(test)]
#[path = "gpu_idle_tests.rs"]
mod tests;
