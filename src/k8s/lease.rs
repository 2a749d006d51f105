//! The recoverer's Lease (`coordination.k8s.io/v1`): several engines may watch one training Job
//! — a TUI, `gantry watch`, `gantry serve`, on one machine or several — and what must happen
//! once (a recovery, a message) is done by the one that holds `gantry-engine-<job>` in the Job's
//! namespace. The holder renews it every [`RENEW_EVERY`]. Nobody trusts the times a record
//! claims (a broken client, a hand-written record or a machine whose clock is wrong could claim
//! anything): as client-go's leader election does, an engine judges a holder silent by its own
//! monotonic clock, from when it last saw the record change (`engine::world::lease`), and takes
//! it over after [`LEASE_SECONDS`] of silence. Every write names the Lease's
//! `resourceVersion`, so two engines taking it at once cannot both win, and a takeover replaces
//! only the record that was judged silent.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};

use super::labels::{JOB_LABEL, MANAGED_BY, MANAGER};
use super::status_code;

/// How long a holder that stopped renewing keeps the Lease, by the clock of whoever watches it.
pub const LEASE_SECONDS: i32 = 15;
/// How often the holder renews (and the others look again).
pub const RENEW_EVERY: Duration = Duration::from_secs(5);

/// The Gantry that holds it says its version and whether it runs in the cluster (the
/// watcher), so that the others can say who watches and a local engine can make way.
pub const VERSION_ANNOTATION: &str = "gantry.dev/version";
pub const IN_CLUSTER_ANNOTATION: &str = "gantry.dev/in-cluster";

/// This Gantry's version.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Who takes and renews: its name on the record, and whether it is the watcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub identity: String,
    pub in_cluster: bool,
}

/// What the holder says of itself on the Lease (as it wrote it: shown, never trusted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stamp {
    pub version: Option<String>,
    pub in_cluster: bool,
}

impl Stamp {
    fn of(lease: &Lease) -> Stamp {
        let annotations = lease.metadata.annotations.as_ref();
        let get = |key: &str| annotations.and_then(|a| a.get(key));
        Stamp {
            version: get(VERSION_ANNOTATION).map(|v| crate::sanitize::one_line(v)),
            in_cluster: get(IN_CLUSTER_ANNOTATION).is_some_and(|v| v == "true"),
        }
    }
}

/// Writes `me`'s stamp on the Lease it takes or renews.
fn stamp(lease: &mut Lease, me: &Holder) {
    let annotations = lease
        .metadata
        .annotations
        .get_or_insert_with(Default::default);
    annotations.insert(VERSION_ANNOTATION.into(), VERSION.into());
    annotations.insert(IN_CLUSTER_ANNOTATION.into(), me.in_cluster.to_string());
}

/// The Lease of the training Job `job`.
pub fn lease_name(job: &str) -> String {
    format!("gantry-engine-{job}")
}

/// The Lease's record as it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Who it names (None: nobody, or an empty name).
    pub holder: Option<String>,
    /// When its holder says it renewed it, by the holder's clock: shown, never trusted.
    pub renew_time: Option<Timestamp>,
    pub transitions: i32,
    /// The object's `resourceVersion`: a takeover replaces this record and no later one.
    pub version: Option<String>,
    /// What its holder says of itself.
    pub stamp: Stamp,
}

impl Record {
    fn of(lease: &Lease) -> Record {
        let spec = lease.spec.clone().unwrap_or_default();
        Record {
            holder: spec
                .holder_identity
                .filter(|h| !h.is_empty())
                .map(|h| crate::sanitize::one_line(&h)),
            renew_time: spec.renew_time.map(|t| t.0),
            transitions: spec.lease_transitions.unwrap_or(0),
            version: lease.metadata.resource_version.clone(),
            stamp: Stamp::of(lease),
        }
    }

    /// Whether `other` is the same record as far as a watcher of silence is concerned: the same
    /// holder, renewal and transitions (client-go compares the whole record).
    pub fn unchanged(&self, other: &Record) -> bool {
        (&self.holder, &self.renew_time, self.transitions)
            == (&other.holder, &other.renew_time, other.transitions)
    }
}

/// The record, as it is (None: there is no Lease yet).
pub async fn get(
    client: &kube::Client,
    namespace: &str,
    job: &str,
) -> Result<Option<Record>, kube::Error> {
    let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
    Ok(api
        .get_opt(&lease_name(job))
        .await?
        .as_ref()
        .map(Record::of))
}

/// What a take or a renewal found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// This engine holds it: the record it wrote.
    Mine(Record),
    /// Another engine wrote first, or holds it: the record as it is now.
    Theirs(Option<Record>),
}

/// Takes the Lease for `me`: makes it if there is none, else replaces the record `judged` (the
/// one this engine saw unheld or silent) — and only that one.
pub async fn take(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    me: &Holder,
    judged: Option<&Record>,
    now: Timestamp,
) -> Result<Outcome, kube::Error> {
    let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
    let name = lease_name(job);
    let Some(mut lease) = api.get_opt(&name).await? else {
        return match api
            .create(&PostParams::default(), &new_lease(&name, job, me, now))
            .await
        {
            Ok(made) => Ok(Outcome::Mine(Record::of(&made))),
            Err(e) if status_code(&e) == Some(409) => {
                Ok(Outcome::Theirs(get(client, namespace, job).await?))
            }
            Err(e) => Err(e),
        };
    };
    let found = Record::of(&lease);
    if judged.is_none_or(|j| j.version != found.version) {
        // It changed since it was judged: whoever wrote it is alive.
        return Ok(Outcome::Theirs(Some(found)));
    }
    stamp(&mut lease, me);
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    spec.holder_identity = Some(me.identity.clone());
    spec.acquire_time = Some(MicroTime(now));
    spec.renew_time = Some(MicroTime(now));
    spec.lease_duration_seconds = Some(LEASE_SECONDS);
    spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
    write(client, namespace, job, &api, &name, &lease).await
}

/// Renews the Lease `me` holds; if another holds it now, says who.
pub async fn renew(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    me: &Holder,
    now: Timestamp,
) -> Result<Outcome, kube::Error> {
    let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
    let name = lease_name(job);
    let Some(mut lease) = api.get_opt(&name).await? else {
        return Ok(Outcome::Theirs(None));
    };
    let found = Record::of(&lease);
    if found.holder.as_deref() != Some(me.identity.as_str()) {
        return Ok(Outcome::Theirs(Some(found)));
    }
    stamp(&mut lease, me);
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    spec.renew_time = Some(MicroTime(now));
    spec.lease_duration_seconds = Some(LEASE_SECONDS);
    write(client, namespace, job, &api, &name, &lease).await
}

async fn write(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    api: &Api<Lease>,
    name: &str,
    lease: &Lease,
) -> Result<Outcome, kube::Error> {
    match api.replace(name, &PostParams::default(), lease).await {
        Ok(written) => Ok(Outcome::Mine(Record::of(&written))),
        // Another engine wrote in between (renewed, or took it): look again.
        Err(e) if status_code(&e) == Some(409) => {
            Ok(Outcome::Theirs(get(client, namespace, job).await?))
        }
        Err(e) => Err(e),
    }
}

/// Gives the Lease up, if this engine holds it (an engine that stops cleanly hands over at
/// once rather than after [`LEASE_SECONDS`]). Whether it was given up.
pub async fn release(client: &kube::Client, namespace: &str, job: &str, me: &str) -> bool {
    let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
    let name = lease_name(job);
    let Ok(Some(mut lease)) = api.get_opt(&name).await else {
        return false;
    };
    let Some(spec) = lease.spec.as_mut() else {
        return false;
    };
    if spec.holder_identity.as_deref() != Some(me) {
        return false;
    }
    spec.holder_identity = None;
    spec.renew_time = None;
    spec.acquire_time = None;
    match api.replace(&name, &PostParams::default(), &lease).await {
        Ok(_) => true,
        Err(e) => {
            tracing::debug!(error = %e, "giving up the recoverer's Lease");
            false
        }
    }
}

/// The holder a one-shot reader (`gantry status`) is told of: the name the record gives, and
/// whether it looks silent — its renewal older than the Lease's duration by this machine's
/// clock. A reader that looks once cannot watch for silence, so it never says the Lease is free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub identity: String,
    pub looks_silent: bool,
    /// What the holder says of itself (its version; whether it is the watcher).
    pub stamp: Stamp,
}

/// Who the record names, once (`gantry status`).
pub async fn named(
    client: &kube::Client,
    namespace: &str,
    job: &str,
) -> Result<Option<Named>, kube::Error> {
    let record = get(client, namespace, job).await?;
    Ok(record.and_then(|r| name_in(&r, Timestamp::now())))
}

fn name_in(record: &Record, now: Timestamp) -> Option<Named> {
    let identity = record.holder.clone()?;
    let looks_silent = record
        .renew_time
        .is_none_or(|t| t.as_second() + i64::from(LEASE_SECONDS) < now.as_second());
    Some(Named {
        identity,
        looks_silent,
        stamp: record.stamp.clone(),
    })
}

fn new_lease(name: &str, job: &str, me: &Holder, now: Timestamp) -> Lease {
    let mut lease = Lease {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(
                [
                    (MANAGED_BY.to_string(), MANAGER.to_string()),
                    (JOB_LABEL.to_string(), job.to_string()),
                ]
                .into(),
            ),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(me.identity.clone()),
            lease_duration_seconds: Some(LEASE_SECONDS),
            acquire_time: Some(MicroTime(now)),
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(0),
            ..Default::default()
        }),
    };
    stamp(&mut lease, me);
    lease
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(holder: Option<&str>, renewed: &str) -> Record {
        Record {
            holder: holder.map(str::to_string),
            renew_time: renewed.parse().ok(),
            transitions: 1,
            version: Some("7".into()),
            stamp: Default::default(),
        }
    }

    #[test]
    fn a_one_shot_reader_names_the_holder_and_says_when_it_looks_silent() {
        let now: Timestamp = "2026-12-05T14:00:30Z".parse().unwrap_or_default();
        let fresh = record(Some("alice@a pid 1"), "2026-12-05T14:00:20Z");
        let named = name_in(&fresh, now).unwrap_or_else(|| panic!("named"));
        assert_eq!(named.identity, "alice@a pid 1");
        assert!(!named.looks_silent);
        let old = record(Some("alice@a pid 1"), "2026-12-05T14:00:00Z");
        assert!(name_in(&old, now).is_some_and(|n| n.looks_silent));
        assert_eq!(name_in(&record(None, "2026-12-05T14:00:20Z"), now), None);
    }

    #[test]
    fn a_record_changes_with_its_holder_renewal_or_transitions_not_its_version() {
        let a = record(Some("a"), "2026-12-05T14:00:20Z");
        let mut b = a.clone();
        b.version = Some("8".into());
        assert!(a.unchanged(&b));
        b.renew_time = "2026-12-05T14:00:25Z".parse().ok();
        assert!(!a.unchanged(&b));
    }
}
