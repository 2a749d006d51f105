//! The recoverer's Lease (`coordination.k8s.io/v1`): several engines may watch one training Job
//! — a TUI, `gantry watch`, `gantry serve`, on one machine or several — and what must happen
//! once (a recovery) is done by the one that holds `gantry-engine-<job>` in the Job's namespace.
//! The holder renews it every [`RENEW_EVERY`]; one that stops renewing (its process died, its
//! machine lost the network) is replaced by another after [`LEASE_SECONDS`]. Every write names
//! the Lease's `resourceVersion`, so two engines taking it at once cannot both win.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};

use super::labels::{JOB_LABEL, MANAGED_BY, MANAGER};
use super::status_code;

/// How long a holder that stopped renewing keeps the Lease.
pub const LEASE_SECONDS: i32 = 15;
/// How often the holder renews (and the others look again).
pub const RENEW_EVERY: Duration = Duration::from_secs(5);

/// The Lease of the training Job `job`.
pub fn lease_name(job: &str) -> String {
    format!("gantry-engine-{job}")
}

/// Who holds the Lease, as it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub identity: String,
    /// Whether that is this engine.
    pub mine: bool,
}

/// What an engine that may hold the Lease found: it holds it now, or who does (None: nobody).
pub async fn hold(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    me: &str,
    now: Timestamp,
) -> Result<Option<Holder>, kube::Error> {
    let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
    let name = lease_name(job);
    let Some(mut lease) = api.get_opt(&name).await? else {
        let lease = new_lease(&name, job, me, now);
        return match api.create(&PostParams::default(), &lease).await {
            Ok(_) => Ok(Some(mine(me))),
            // Another engine made it first: it holds it.
            Err(e) if status_code(&e) == Some(409) => read(client, namespace, job, me).await,
            Err(e) => Err(e),
        };
    };
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
    let expired = expired(spec, now);
    match holder {
        Some(h) if h != me && !expired => return Ok(Some(theirs(h, me))),
        Some(h) if h == me => {}
        // Nobody's, or its holder stopped renewing: take it over.
        _ => {
            spec.holder_identity = Some(me.to_string());
            spec.acquire_time = Some(micro(now));
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
    }
    spec.renew_time = Some(micro(now));
    spec.lease_duration_seconds = Some(LEASE_SECONDS);
    match api.replace(&name, &PostParams::default(), &lease).await {
        Ok(_) => Ok(Some(mine(me))),
        // Another engine wrote in between (renewed, or took it): look again.
        Err(e) if status_code(&e) == Some(409) => read(client, namespace, job, me).await,
        Err(e) => Err(e),
    }
}

/// Who holds the Lease, without trying to take it (a read-only engine, `gantry status`). An
/// expired holder holds nothing.
pub async fn read(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    me: &str,
) -> Result<Option<Holder>, kube::Error> {
    let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
    let Some(lease) = api.get_opt(&lease_name(job)).await? else {
        return Ok(None);
    };
    let spec = lease.spec.unwrap_or_default();
    if expired(&spec, Timestamp::now()) {
        return Ok(None);
    }
    Ok(spec
        .holder_identity
        .filter(|h| !h.is_empty())
        .map(|h| theirs(h, me)))
}

/// Gives the Lease up, if this engine holds it (an engine that stops cleanly hands over at
/// once rather than after [`LEASE_SECONDS`]).
pub async fn release(client: &kube::Client, namespace: &str, job: &str, me: &str) {
    let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
    let name = lease_name(job);
    let Ok(Some(mut lease)) = api.get_opt(&name).await else {
        return;
    };
    let Some(spec) = lease.spec.as_mut() else {
        return;
    };
    if spec.holder_identity.as_deref() != Some(me) {
        return;
    }
    spec.holder_identity = None;
    spec.renew_time = None;
    spec.acquire_time = None;
    if let Err(e) = api.replace(&name, &PostParams::default(), &lease).await {
        tracing::debug!(error = %e, "giving up the recoverer's Lease");
    }
}

fn new_lease(name: &str, job: &str, me: &str, now: Timestamp) -> Lease {
    Lease {
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
            holder_identity: Some(me.to_string()),
            lease_duration_seconds: Some(LEASE_SECONDS),
            acquire_time: Some(micro(now)),
            renew_time: Some(micro(now)),
            lease_transitions: Some(0),
            ..Default::default()
        }),
    }
}

fn expired(spec: &LeaseSpec, now: Timestamp) -> bool {
    let duration = i64::from(spec.lease_duration_seconds.unwrap_or(LEASE_SECONDS).max(1));
    match &spec.renew_time {
        Some(renewed) => renewed.0.as_second() + duration < now.as_second(),
        None => true,
    }
}

fn micro(t: Timestamp) -> MicroTime {
    MicroTime(t)
}

fn mine(me: &str) -> Holder {
    Holder {
        identity: me.to_string(),
        mine: true,
    }
}

fn theirs(identity: String, me: &str) -> Holder {
    Holder {
        mine: identity == me,
        identity: crate::sanitize::one_line(&identity),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_not_renewed_for_its_duration_is_nobodys() {
        let renewed: Timestamp = "2026-12-05T14:00:00Z".parse().unwrap_or_default();
        let spec = LeaseSpec {
            holder_identity: Some("alice@a pid 1".into()),
            lease_duration_seconds: Some(15),
            renew_time: Some(MicroTime(renewed)),
            ..Default::default()
        };
        let at = |s: i64| Timestamp::from_second(renewed.as_second() + s).unwrap_or_default();
        assert!(!expired(&spec, at(15)));
        assert!(expired(&spec, at(16)));
        assert!(expired(&LeaseSpec::default(), at(0)));
    }
}
