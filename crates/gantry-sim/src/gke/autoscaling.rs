//! A node pool's autoscaling settings (`NodePoolAutoscaling`), checked as GKE checks them and
//! filled with its defaults. The simulator keeps the settings; it runs no cluster autoscaler.

use serde_json::{Map, Value, json};

use super::errors::GkeError;

/// Reads autoscaling settings: None when autoscaling is off (GKE then reports none), else the
/// settings with `locationPolicy` defaulted to BALANCED.
pub fn checked(settings: Option<&Value>) -> Result<Option<Map<String, Value>>, GkeError> {
    let Some(settings) = settings.and_then(Value::as_object) else {
        return Ok(None);
    };
    if settings.get("enabled").and_then(Value::as_bool) != Some(true) {
        return Ok(None);
    }
    let int = |key: &str| settings.get(key).and_then(Value::as_i64);
    let per_zone = (int("minNodeCount"), int("maxNodeCount"));
    let total = (int("totalMinNodeCount"), int("totalMaxNodeCount"));
    let total_given = total.0.is_some_and(|n| n != 0) || total.1.is_some_and(|n| n != 0);
    let per_zone_given = per_zone.1.is_some_and(|n| n != 0);
    if total_given && per_zone_given {
        return Err(GkeError::invalid(
            "Autoscaling limits are either per zone (min_node_count, max_node_count) or for the \
             whole pool (total_min_node_count, total_max_node_count), not both.",
        ));
    }
    let (prefix, (min, max)) = if total_given {
        ("total_", total)
    } else {
        ("", per_zone)
    };
    let (min, max) = (min.unwrap_or(0), max.unwrap_or(0));
    if min < 0 {
        return Err(GkeError::invalid(format!(
            "Invalid value for field \"autoscaling.{prefix}min_node_count\": {min}. Must be at \
             least 0."
        )));
    }
    if max < 1 || max < min {
        return Err(GkeError::invalid(format!(
            "Invalid value for field \"autoscaling.{prefix}max_node_count\": {max}. Must be at \
             least 1 and at least {prefix}min_node_count ({min})."
        )));
    }
    let mut filled = settings.clone();
    if filled
        .get("locationPolicy")
        .and_then(Value::as_str)
        .is_none_or(|p| p == "LOCATION_POLICY_UNSPECIFIED")
    {
        filled.insert("locationPolicy".into(), json!("BALANCED"));
    }
    // Zero limits are proto defaults: GKE leaves them out of its answers.
    filled.retain(|_, v| v.as_i64() != Some(0) && *v != Value::Bool(false));
    Ok(Some(filled))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn fills_the_location_policy_and_drops_zero_limits() {
        let got = checked(Some(
            &json!({"enabled": true, "minNodeCount": 1, "maxNodeCount": 4,
            "totalMinNodeCount": 0, "totalMaxNodeCount": 0}),
        ))
        .unwrap()
        .unwrap();
        assert_eq!(
            Value::Object(got),
            json!({"enabled": true, "minNodeCount": 1, "maxNodeCount": 4, "locationPolicy": "BALANCED"})
        );
        assert_eq!(checked(Some(&json!({"enabled": false}))).unwrap(), None);
        assert_eq!(checked(None).unwrap(), None);
    }

    #[test]
    fn refuses_limits_gke_refuses() {
        for bad in [
            json!({"enabled": true, "minNodeCount": 3, "maxNodeCount": 2}),
            json!({"enabled": true, "minNodeCount": -1, "maxNodeCount": 2}),
            json!({"enabled": true, "maxNodeCount": 0}),
            json!({"enabled": true, "maxNodeCount": 2, "totalMaxNodeCount": 6}),
        ] {
            assert_eq!(
                checked(Some(&bad)).unwrap_err().status,
                "INVALID_ARGUMENT",
                "{bad}"
            );
        }
        assert!(checked(Some(&json!({"enabled": true, "totalMaxNodeCount": 6}))).is_ok());
    }
}
