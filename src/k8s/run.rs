//! A run: what one `launch` starts, and every attempt after it until the next launch — those a
//! person asks for (`r`, `gantry retry`) and those Gantry starts by itself to recover. Its id
//! and counts live on its Jobs (the `gantry.dev/run` label, the `gantry.dev/run-attempt` and
//! `gantry.dev/recoveries` annotations), so a restarted Gantry, or one on another machine,
//! carries on counting; and in the training container's environment, so the training code can
//! resume from its last checkpoint:
//!
//! - `GANTRY_RUN_ID`: the same in every attempt of a run;
//! - `GANTRY_ATTEMPT`: 1 for the launch, 2, 3, … for each attempt after it;
//! - `GANTRY_RECOVERY`: how many of those Gantry started by itself.
//!
//! The `GANTRY_` prefix is Gantry's: `[job.env]` and `--env` may not set it.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::EnvVar;
use kube::api::ObjectMeta;

use crate::names::{ATTEMPT_ENV, RECOVERY_ENV, RESERVED_ENV_PREFIX, RUN_ID_ENV};

pub const RUN_LABEL: &str = "gantry.dev/run";
pub const RUN_ATTEMPT: &str = "gantry.dev/run-attempt";
pub const RECOVERIES: &str = "gantry.dev/recoveries";

/// One attempt's place in its run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub id: String,
    /// 1 for the attempt the launch made.
    pub attempt: u32,
    /// Attempts Gantry started by itself so far, this one included if it is one.
    pub recoveries: u32,
}

/// Why the next attempt of a run is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// A person asked (`r`, `gantry retry`).
    Retry,
    /// Gantry recovers the run by itself.
    Recovery,
}

impl Run {
    /// A new run, as a launch starts it: `20261205-135400-a1b2c3` (sortable, a label value).
    pub fn launched(now: jiff::Timestamp) -> Run {
        let time = now.strftime("%Y%m%d-%H%M%S");
        let random = uuid::Uuid::new_v4().simple().to_string();
        Run {
            id: format!("{time}-{}", &random[..6]),
            attempt: 1,
            recoveries: 0,
        }
    }

    /// When the run was launched, as its id says (None for an id Gantry did not make).
    pub fn started(&self) -> Option<jiff::Timestamp> {
        let stamp = self.id.get(..15)?;
        let civil = jiff::civil::DateTime::strptime("%Y%m%d-%H%M%S", stamp).ok()?;
        civil
            .to_zoned(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|z| z.timestamp())
    }

    /// An attempt made before runs were recorded: the first of a run of its own, with no id.
    pub fn unrecorded() -> Run {
        Run {
            id: String::new(),
            attempt: 1,
            recoveries: 0,
        }
    }

    /// The most attempts the run may have: those a person made (the launch and retries), and
    /// `max_recoveries` more.
    pub fn most_attempts(&self, max_recoveries: u32) -> u32 {
        self.attempt.saturating_sub(self.recoveries) + max_recoveries
    }

    /// The run an attempt belongs to, as its labels and annotations say; None for an attempt
    /// made before runs were recorded, or not by Gantry.
    pub fn of(meta: &ObjectMeta) -> Option<Run> {
        let id = meta.labels.as_ref()?.get(RUN_LABEL)?.clone();
        let annotation = |key: &str| -> u32 {
            meta.annotations
                .as_ref()
                .and_then(|a| a.get(key))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        Some(Run {
            id,
            attempt: annotation(RUN_ATTEMPT).max(1),
            recoveries: annotation(RECOVERIES),
        })
    }

    /// The run's next attempt. An attempt from before runs were recorded starts one.
    pub fn next(previous: Option<&Run>, why: Next, now: jiff::Timestamp) -> Run {
        let mut run = previous.cloned().unwrap_or_else(|| Run::launched(now));
        run.attempt += 1;
        if why == Next::Recovery {
            run.recoveries += 1;
        }
        run
    }

    /// Puts the run on a new attempt's Job: its label (on the Job and its pods), annotations,
    /// and the training container's environment.
    pub fn stamp(&self, job: &mut Job) {
        let meta = &mut job.metadata;
        meta.labels
            .get_or_insert_with(BTreeMap::new)
            .insert(RUN_LABEL.into(), self.id.clone());
        let annotations = meta.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(RUN_ATTEMPT.into(), self.attempt.to_string());
        annotations.insert(RECOVERIES.into(), self.recoveries.to_string());
        let Some(spec) = job.spec.as_mut() else {
            return;
        };
        spec.template
            .metadata
            .get_or_insert_with(Default::default)
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(RUN_LABEL.into(), self.id.clone());
        let Some(container) = spec
            .template
            .spec
            .as_mut()
            .and_then(|p| p.containers.first_mut())
        else {
            return;
        };
        let env = container.env.get_or_insert_with(Vec::new);
        env.retain(|e| !e.name.starts_with(RESERVED_ENV_PREFIX));
        for (name, value) in [
            (RUN_ID_ENV, self.id.clone()),
            (ATTEMPT_ENV, self.attempt.to_string()),
            (RECOVERY_ENV, self.recoveries.to_string()),
        ] {
            env.push(EnvVar {
                name: name.into(),
                value: Some(value),
                value_from: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn now() -> jiff::Timestamp {
        "2026-12-05T13:54:00Z".parse().unwrap()
    }

    #[test]
    fn a_run_keeps_its_id_and_counts_recoveries_apart_from_retries() {
        let first = Run::launched(now());
        assert!(first.id.starts_with("20261205-135400-"), "{}", first.id);
        assert!(crate::names::is_label_value(&first.id));
        let retried = Run::next(Some(&first), Next::Retry, now());
        let recovered = Run::next(Some(&retried), Next::Recovery, now());
        assert_eq!((retried.attempt, retried.recoveries), (2, 0));
        assert_eq!((recovered.attempt, recovered.recoveries), (3, 1));
        assert_eq!(recovered.id, first.id);
        assert_eq!(recovered.started(), Some(now()), "when it was launched");
        assert_eq!(Run::unrecorded().started(), None);
    }

    #[test]
    fn a_stamped_job_says_its_run_in_labels_annotations_and_env() {
        let mut job: Job = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "train-3"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i",
                "env": [{"name": "GANTRY_ATTEMPT", "value": "old"}, {"name": "KEEP", "value": "1"}]}]}}}
        }))
        .unwrap();
        let run = Run {
            id: "20261205-135400-a1b2c3".into(),
            attempt: 3,
            recoveries: 1,
        };
        run.stamp(&mut job);
        assert_eq!(Run::of(&job.metadata), Some(run));
        let env: Vec<(String, String)> = job.spec.unwrap().template.spec.unwrap().containers[0]
            .env
            .clone()
            .unwrap()
            .into_iter()
            .map(|e| (e.name, e.value.unwrap_or_default()))
            .collect();
        assert_eq!(
            env,
            [
                ("KEEP", "1"),
                ("GANTRY_RUN_ID", "20261205-135400-a1b2c3"),
                ("GANTRY_ATTEMPT", "3"),
                ("GANTRY_RECOVERY", "1"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
    }
}
