//! Leases (`coordination.k8s.io/v1`) as the API server's lease strategy admits them, on create
//! and on every update alike: its MicroTimes read as Go reads them and written back in UTC
//! (`micro_time`), and `ValidateLeaseSpec`'s rules with their field paths. Nothing else touches
//! a Lease: its holder, renewals and transitions are its clients' to write, so that several
//! engines can elect a leader through it as they would on a real cluster.

use serde_json::{Value, json};

use super::errors::ApiError;
use super::meta;
use super::micro_time;
use super::names;
use super::resources::ResourceType;

const TIMES: &[&str] = &["acquireTime", "renewTime"];
const STRATEGIES: &[&str] = &["OldestEmulationVersion"];

/// Normalizes `lease`'s spec as the API server stores it and validates it.
pub fn admit(resource: &ResourceType, lease: &mut Value) -> Result<(), ApiError> {
    if !lease.get("spec").is_some_and(Value::is_object) {
        // `spec` is no pointer in the Go type: an absent spec is served as `{}`.
        lease["spec"] = json!({});
    }
    let spec = &mut lease["spec"];
    if let Some(fields) = spec.as_object_mut() {
        // A null is an unset pointer, which the API server omits when it writes the object.
        fields.retain(|_, v| !v.is_null());
    }
    for field in TIMES {
        if let Some(text) = spec.get(*field).and_then(Value::as_str) {
            let canonical = micro_time::normalize(text).map_err(|e| {
                ApiError::bad_request(format!(
                    "Lease in version \"v1\" cannot be handled as a Lease: {e}"
                ))
            })?;
            spec[*field] = json!(canonical);
        }
    }
    let causes = validate_spec(spec);
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(resource, meta::name(lease), &causes))
    }
}

/// `ValidateLeaseSpec`: (field, message) for each rule `spec` breaks.
fn validate_spec(spec: &Value) -> Vec<(String, String)> {
    let mut causes = Vec::new();
    if let Some(n) = spec["leaseDurationSeconds"].as_i64().filter(|n| *n <= 0) {
        causes.push((
            "spec.leaseDurationSeconds".into(),
            format!("Invalid value: {n}: must be greater than 0"),
        ));
    }
    if let Some(n) = spec["leaseTransitions"].as_i64().filter(|n| *n < 0) {
        causes.push((
            "spec.leaseTransitions".into(),
            format!("Invalid value: {n}: must be greater than or equal to 0"),
        ));
    }
    let strategy = spec["strategy"].as_str();
    if let Some(strategy) = strategy {
        causes.extend(validate_strategy(strategy));
    }
    let preferred = spec["preferredHolder"].as_str().unwrap_or_default();
    if !preferred.is_empty() && strategy.is_none_or(str::is_empty) {
        causes.push((
            "spec.preferredHolder".into(),
            "Forbidden: may only be specified if `strategy` is defined".into(),
        ));
    }
    causes
}

/// `ValidateCoordinatedLeaseStrategy`: a name Kubernetes defines, or a qualified name with a
/// prefix. Upstream names the child of `spec.strategy` once more, hence the doubled path.
fn validate_strategy(strategy: &str) -> Vec<(String, String)> {
    let field = "spec.strategy.strategy".to_string();
    if !strategy.contains('/') {
        if STRATEGIES.contains(&strategy) {
            return Vec::new();
        }
        let supported: Vec<String> = STRATEGIES.iter().map(|s| format!("\"{s}\"")).collect();
        return vec![(
            field,
            format!(
                "Unsupported value: \"{strategy}\": supported values: {}",
                supported.join(", ")
            ),
        )];
    }
    names::qualified_name(strategy)
        .into_iter()
        .map(|m| (field.clone(), format!("Invalid value: \"{strategy}\": {m}")))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::kube::resources::Kind;

    fn admitted(spec: Value) -> Result<Value, ApiError> {
        let mut lease = json!({"metadata": {"name": "gantry-leader"}, "spec": spec});
        admit(Kind::Lease.resource(), &mut lease).map(|()| lease)
    }

    #[test]
    fn a_lease_of_no_duration_is_invalid_at_spec_lease_duration_seconds() {
        let e = admitted(json!({"holderIdentity": "a", "leaseDurationSeconds": 0})).unwrap_err();
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "Lease.coordination.k8s.io \"gantry-leader\" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"
        );
        assert_eq!(e.details["causes"][0]["field"], "spec.leaseDurationSeconds");
    }

    #[test]
    fn negative_transitions_and_a_preferred_holder_without_strategy_are_each_named() {
        let e = admitted(json!({"leaseTransitions": -1, "preferredHolder": "b"})).unwrap_err();
        assert_eq!(
            e.message,
            "Lease.coordination.k8s.io \"gantry-leader\" is invalid: [spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0, spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined]"
        );
        assert_eq!(e.details["causes"][1]["reason"], "FieldValueForbidden");
    }

    #[test]
    fn a_strategy_is_one_kubernetes_defines_or_a_prefixed_qualified_name() {
        assert!(
            admitted(json!({"strategy": "OldestEmulationVersion", "preferredHolder": "b"})).is_ok()
        );
        assert!(admitted(json!({"strategy": "example.com/mine"})).is_ok());
        let e = admitted(json!({"strategy": "Newest"})).unwrap_err();
        assert!(
            e.message.ends_with("spec.strategy.strategy: Unsupported value: \"Newest\": supported values: \"OldestEmulationVersion\""),
            "{}",
            e.message
        );
    }

    #[test]
    fn any_holder_identity_and_canonical_times_are_kept_as_given() {
        let spec = json!({
            "holderIdentity": "engine a (pid 7) ✓",
            "leaseDurationSeconds": 15,
            "leaseTransitions": 0,
            "acquireTime": "2026-12-05T13:00:00.123456Z",
            "renewTime": "2026-12-05T13:00:05.000001Z",
        });
        assert_eq!(admitted(spec.clone()).unwrap()["spec"], spec);
    }

    #[test]
    fn a_time_the_server_cannot_read_is_a_bad_request() {
        let e = admitted(json!({"renewTime": "2026-12-05T13:00:00Z"})).unwrap_err();
        assert_eq!(e.code, 400);
        assert!(
            e.message
                .starts_with("Lease in version \"v1\" cannot be handled as a Lease: parsing time"),
            "{}",
            e.message
        );
    }

    #[test]
    fn an_absent_spec_is_served_empty_and_nulls_are_dropped() {
        let mut lease = json!({"metadata": {"name": "l"}});
        admit(Kind::Lease.resource(), &mut lease).unwrap();
        assert_eq!(lease["spec"], json!({}));
        assert_eq!(
            admitted(json!({"holderIdentity": null})).unwrap()["spec"],
            json!({})
        );
    }
}
