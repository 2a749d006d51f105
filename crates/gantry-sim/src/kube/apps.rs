//! Deployments and ReplicaSets as the API server admits them: the apps/v1 defaults
//! (`SetDefaults_Deployment`, `SetDefaults_ReplicaSet`), the validation a pod-owning controller's
//! object gets (`ValidateDeploymentSpec`, `ValidatePodTemplateSpecForReplicaSet`), and on update
//! the immutable selector and the generation bump of the registry's strategy (a Deployment's
//! spec or annotations, a ReplicaSet's spec).

use serde_json::{Value, json};

use super::defaults::{pod_spec, validate_pod_spec};
use super::errors::ApiError;
use super::meta;
use super::resources::{Kind, ResourceType};
use super::selectors::LabelSelector;

type Causes = Vec<(String, String)>;

/// Defaults and validation of a new Deployment or ReplicaSet; its generation starts at 1.
pub fn admit_new(resource: &ResourceType, obj: &mut Value) -> Result<(), ApiError> {
    apply_defaults(resource.kind, obj);
    validate(resource, obj)?;
    obj["metadata"]["generation"] = json!(1);
    obj["status"] = json!({});
    Ok(())
}

/// What an update of a Deployment or ReplicaSet goes through, `next` becoming what is stored:
/// defaults, validation, the selector kept, the generation bumped as the registry does.
/// Other kinds pass untouched.
pub fn admit_update(kind: Kind, current: &Value, next: &mut Value) -> Result<(), String> {
    if kind != Kind::Deployment && kind != Kind::ReplicaSet {
        return Ok(());
    }
    apply_defaults(kind, next);
    let causes = causes(kind, next);
    if let Some((field, message)) = causes.first() {
        return Err(format!("{field}: {message}"));
    }
    // apps/v1 made the selector immutable (`ValidateDeploymentUpdate`, `ValidateReplicaSetUpdate`).
    if current["spec"]["selector"] != next["spec"]["selector"] {
        return Err(format!(
            "spec.selector: Invalid value: {}: field is immutable",
            next["spec"]["selector"]
        ));
    }
    let annotations_changed = kind == Kind::Deployment
        && current["metadata"]["annotations"] != next["metadata"]["annotations"];
    if current["spec"] != next["spec"] || annotations_changed {
        let generation = current["metadata"]["generation"].as_u64().unwrap_or(1) + 1;
        next["metadata"]["generation"] = json!(generation);
    }
    Ok(())
}

fn set_default(obj: &mut Value, key: &str, value: Value) {
    if obj.get(key).is_none_or(Value::is_null) {
        obj[key] = value;
    }
}

fn apply_defaults(kind: Kind, obj: &mut Value) {
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    let spec = &mut obj["spec"];
    set_default(spec, "replicas", json!(1));
    if kind == Kind::Deployment {
        if !spec["strategy"].is_object() {
            spec["strategy"] = json!({});
        }
        let strategy = &mut spec["strategy"];
        set_default(strategy, "type", json!("RollingUpdate"));
        if strategy["type"] == "RollingUpdate" {
            if !strategy["rollingUpdate"].is_object() {
                strategy["rollingUpdate"] = json!({});
            }
            let rolling = &mut strategy["rollingUpdate"];
            set_default(rolling, "maxUnavailable", json!("25%"));
            set_default(rolling, "maxSurge", json!("25%"));
        }
        set_default(spec, "revisionHistoryLimit", json!(10));
        set_default(spec, "progressDeadlineSeconds", json!(600));
    }
    if spec["template"].is_object() {
        pod_spec(&mut spec["template"]["spec"]);
    }
}

fn validate(resource: &ResourceType, obj: &Value) -> Result<(), ApiError> {
    let name = meta::name(obj);
    let causes = causes(resource.kind, obj);
    if !causes.is_empty() {
        return Err(ApiError::invalid(resource, name, &causes));
    }
    validate_pod_spec(
        resource,
        name,
        &obj["spec"]["template"]["spec"],
        "spec.template.spec",
    )
}

fn causes(kind: Kind, obj: &Value) -> Causes {
    let spec = &obj["spec"];
    let mut causes = Causes::new();
    if spec["replicas"].as_i64().is_some_and(|n| n < 0) {
        causes.push((
            "spec.replicas".into(),
            format!(
                "Invalid value: {}: must be greater than or equal to 0",
                spec["replicas"]
            ),
        ));
    }
    let selector = &spec["selector"];
    let has_requirements = |key: &str| {
        selector[key].as_object().is_some_and(|m| !m.is_empty())
            || selector[key].as_array().is_some_and(|a| !a.is_empty())
    };
    if !selector.is_object() {
        causes.push(("spec.selector".into(), "Required value".into()));
    } else if !has_requirements("matchLabels") && !has_requirements("matchExpressions") {
        let what = if kind == Kind::Deployment {
            "deployment"
        } else {
            "replicaset"
        };
        causes.push((
            "spec.selector".into(),
            format!("Invalid value: {selector}: empty selector is invalid for {what}"),
        ));
    } else {
        let labels = spec["template"]["metadata"]["labels"].as_object();
        if !LabelSelector::from_label_selector_json(selector).matches(labels) {
            causes.push((
                "spec.template.metadata.labels".into(),
                format!(
                    "Invalid value: {}: `selector` does not match template `labels`",
                    spec["template"]["metadata"]["labels"]
                ),
            ));
        }
    }
    let restart = spec["template"]["spec"]["restartPolicy"]
        .as_str()
        .unwrap_or_default();
    if restart != "Always" {
        causes.push((
            "spec.template.spec.restartPolicy".into(),
            format!("Unsupported value: \"{restart}\": supported values: \"Always\""),
        ));
    }
    if kind == Kind::Deployment {
        causes.extend(strategy_causes(&spec["strategy"]));
    }
    causes
}

/// `ValidateDeploymentStrategy` and `ValidateRollingUpdateDeployment`.
fn strategy_causes(strategy: &Value) -> Causes {
    let mut causes = Causes::new();
    match strategy["type"].as_str().unwrap_or_default() {
        "Recreate" => {
            if !strategy["rollingUpdate"].is_null() {
                causes.push((
                    "spec.strategy.rollingUpdate".into(),
                    "Forbidden: may not be specified when strategy `type` is 'Recreate'".into(),
                ));
            }
        }
        "RollingUpdate" => {
            let rolling = &strategy["rollingUpdate"];
            let mut resolved = Vec::new();
            for key in ["maxUnavailable", "maxSurge"] {
                let field = format!("spec.strategy.rollingUpdate.{key}");
                match int_or_percent(&rolling[key]) {
                    Err(message) => causes.push((field, message)),
                    Ok(IntOrPercent::Percent(p)) if key == "maxUnavailable" && p > 100 => causes
                        .push((
                            field,
                            format!("Invalid value: \"{p}%\": must not be greater than 100%"),
                        )),
                    Ok(v) => resolved.push(v.is_zero()),
                }
            }
            if resolved == [true, true] {
                causes.push((
                    "spec.strategy.rollingUpdate.maxUnavailable".into(),
                    "Invalid value: 0: may not be 0 when `maxSurge` is 0".into(),
                ));
            }
        }
        other => causes.push((
            "spec.strategy.type".into(),
            format!(
                "Unsupported value: \"{other}\": supported values: \"Recreate\", \"RollingUpdate\""
            ),
        )),
    }
    causes
}

/// An `intstr.IntOrString` of a rolling update: a count of pods or a percentage of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IntOrPercent {
    Int(i64),
    Percent(i64),
}

impl IntOrPercent {
    fn is_zero(self) -> bool {
        matches!(self, Self::Int(0) | Self::Percent(0))
    }

    /// `intstr.GetScaledValueFromIntOrPercent`: a percentage of `total`, rounded up or down.
    pub fn scaled(self, total: i64, round_up: bool) -> i64 {
        match self {
            Self::Int(n) => n,
            Self::Percent(p) => {
                let product = p * total;
                if round_up {
                    (product + 99).div_euclid(100)
                } else {
                    product.div_euclid(100)
                }
            }
        }
    }
}

/// Reads a count or `N%`; an absent value is 0, as `intstr.ValueOrDefault(…, 0)`.
pub fn int_or_percent(v: &Value) -> Result<IntOrPercent, String> {
    match v {
        Value::Null => Ok(IntOrPercent::Int(0)),
        Value::Number(n) => match n.as_i64() {
            Some(n) if n >= 0 => Ok(IntOrPercent::Int(n)),
            _ => Err(format!(
                "Invalid value: {n}: must be greater than or equal to 0"
            )),
        },
        Value::String(s) => s
            .strip_suffix('%')
            .and_then(|p| p.parse::<i64>().ok())
            .filter(|p| *p >= 0)
            .map(IntOrPercent::Percent)
            .ok_or_else(|| {
                format!(
                    "Invalid value: \"{s}\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
                )
            }),
        other => Err(format!("Invalid value: {other}: must be an integer or a percentage")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn deployment(selector: Value, labels: Value) -> Value {
        json!({"metadata": {"name": "web"}, "spec": {"selector": selector,
            "template": {"metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
    }

    #[test]
    fn a_new_deployment_gets_the_apps_v1_defaults_and_generation_1() {
        let mut d = deployment(
            json!({"matchLabels": {"app": "web"}}),
            json!({"app": "web"}),
        );
        admit_new(Kind::Deployment.resource(), &mut d).unwrap();
        let spec = &d["spec"];
        assert_eq!(spec["replicas"], 1);
        assert_eq!(spec["strategy"]["type"], "RollingUpdate");
        assert_eq!(spec["strategy"]["rollingUpdate"]["maxSurge"], "25%");
        assert_eq!(spec["strategy"]["rollingUpdate"]["maxUnavailable"], "25%");
        assert_eq!(spec["revisionHistoryLimit"], 10);
        assert_eq!(spec["progressDeadlineSeconds"], 600);
        assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
        assert_eq!(d["metadata"]["generation"], 1);
    }

    #[test]
    fn a_selector_that_misses_the_template_labels_is_refused_as_the_api_server_words_it() {
        let mut d = deployment(
            json!({"matchLabels": {"app": "api"}}),
            json!({"app": "web"}),
        );
        let err = admit_new(Kind::Deployment.resource(), &mut d).unwrap_err();
        assert_eq!(err.code, 422);
        assert!(
            err.message.starts_with("Deployment.apps \"web\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"),
            "{}",
            err.message
        );
        let mut none = deployment(Value::Null, json!({"app": "web"}));
        let err = admit_new(Kind::Deployment.resource(), &mut none).unwrap_err();
        assert!(
            err.message.contains("spec.selector: Required value"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_spec_or_annotation_change_bumps_the_generation_and_the_selector_stays() {
        let mut current = deployment(
            json!({"matchLabels": {"app": "web"}}),
            json!({"app": "web"}),
        );
        admit_new(Kind::Deployment.resource(), &mut current).unwrap();
        let mut same = current.clone();
        admit_update(Kind::Deployment, &current, &mut same).unwrap();
        assert_eq!(
            same["metadata"]["generation"], 1,
            "a write that changes nothing"
        );
        let mut labelled = current.clone();
        labelled["metadata"]["labels"] = json!({"team": "ml"});
        admit_update(Kind::Deployment, &current, &mut labelled).unwrap();
        assert_eq!(labelled["metadata"]["generation"], 1, "labels are not spec");
        let mut annotated = current.clone();
        annotated["metadata"]["annotations"] = json!({"note": "x"});
        admit_update(Kind::Deployment, &current, &mut annotated).unwrap();
        assert_eq!(annotated["metadata"]["generation"], 2);
        let mut scaled = current.clone();
        scaled["spec"]["replicas"] = json!(3);
        admit_update(Kind::Deployment, &current, &mut scaled).unwrap();
        assert_eq!(scaled["metadata"]["generation"], 2);
        let mut moved = current.clone();
        moved["spec"]["selector"] = json!({"matchLabels": {"app": "web", "v": "2"}});
        moved["spec"]["template"]["metadata"]["labels"] = json!({"app": "web", "v": "2"});
        let err = admit_update(Kind::Deployment, &current, &mut moved).unwrap_err();
        assert!(err.ends_with("field is immutable"), "{err}");
    }

    #[test]
    fn percentages_round_as_the_deployment_controller_rounds_them() {
        let quarter = int_or_percent(&json!("25%")).unwrap();
        assert_eq!(quarter.scaled(2, true), 1, "surge rounds up");
        assert_eq!(quarter.scaled(2, false), 0, "unavailable rounds down");
        assert_eq!(quarter.scaled(10, true), 3);
        assert_eq!(int_or_percent(&json!(2)).unwrap().scaled(10, false), 2);
        assert!(int_or_percent(&json!("x%")).is_err());
    }
}
