//! Defaults and validation per kind, as the API server applies them on create.

use serde_json::{Value, json};

use super::errors::ApiError;
use super::meta;
use super::names;
use super::resources::{Kind, ResourceType};

pub fn apply_defaults(resource: &ResourceType, obj: &mut Value) -> Result<(), ApiError> {
    match resource.kind {
        Kind::Job => job(resource, obj),
        Kind::Pod => {
            pod_spec(&mut obj["spec"]);
            super::extended_resources::add_tolerations(&mut obj["spec"]);
            validate_pod_spec(
                resource,
                meta::name(obj).to_string().as_str(),
                &obj["spec"],
                "spec",
            )?;
            // A new pod's status is the kubelet's to write.
            obj["status"] = json!({"phase": "Pending", "qosClass": qos_class(&obj["spec"])});
            Ok(())
        }
        Kind::Service => {
            service(obj);
            source_ranges(resource, obj)
        }
        Kind::Namespace => {
            obj["status"] = json!({"phase": "Active"});
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
            let name = meta::name(obj).to_string();
            obj["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
            Ok(())
        }
        Kind::Lease => super::lease::admit(resource, obj),
        Kind::Secret => super::secrets::admit(resource, obj),
        Kind::ConfigMap => super::configmaps::admit(resource, obj),
        Kind::Node | Kind::Event => Ok(()),
        Kind::Deployment | Kind::ReplicaSet => super::apps::admit_new(resource, obj),
        Kind::Role | Kind::RoleBinding | Kind::ClusterRole | Kind::ClusterRoleBinding => {
            super::rbac::admit(resource, obj)
        }
        _ => Ok(()),
    }
}

fn set_default(obj: &mut Value, key: &str, value: Value) {
    if obj.get(key).is_none_or(Value::is_null) {
        obj[key] = value;
    }
}

fn job(resource: &ResourceType, obj: &mut Value) -> Result<(), ApiError> {
    let name = meta::name(obj).to_string();
    let uid = meta::uid(obj).to_string();
    if !obj.get("spec").is_some_and(Value::is_object) {
        return Err(ApiError::invalid(
            resource,
            &name,
            &[("spec".into(), "Required value".into())],
        ));
    }
    let spec = &mut obj["spec"];
    let completions_set = spec.get("completions").is_some_and(|v| !v.is_null());
    let parallelism_set = spec.get("parallelism").is_some_and(|v| !v.is_null());
    if !completions_set && !parallelism_set {
        spec["completions"] = json!(1);
    }
    set_default(spec, "parallelism", json!(1));
    set_default(spec, "backoffLimit", json!(6));
    set_default(spec, "completionMode", json!("NonIndexed"));
    set_default(spec, "suspend", json!(false));
    super::pod_failure_policy::apply_defaults(spec);
    set_default(spec, "podReplacementPolicy", json!("TerminatingOrFailed"));
    set_default(spec, "manualSelector", Value::Null);
    if spec.get("manualSelector").is_some_and(Value::is_null)
        && let Some(s) = spec.as_object_mut()
    {
        s.remove("manualSelector");
    }
    if spec.get("selector").is_none_or(Value::is_null) {
        spec["selector"] = json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}});
    }
    let template = &mut spec["template"];
    if !template.is_object() {
        return Err(ApiError::invalid(
            resource,
            &name,
            &[("spec.template".into(), "Required value".into())],
        ));
    }
    if !template.get("metadata").is_some_and(Value::is_object) {
        template["metadata"] = json!({});
    }
    let labels = &mut template["metadata"]["labels"];
    if !labels.is_object() {
        *labels = json!({});
    }
    labels["batch.kubernetes.io/controller-uid"] = json!(uid);
    labels["batch.kubernetes.io/job-name"] = json!(name);
    labels["controller-uid"] = json!(uid);
    labels["job-name"] = json!(name);
    pod_spec(&mut template["spec"]);

    let mut causes = Vec::new();
    for field in ["parallelism", "completions", "backoffLimit"] {
        if spec[field].as_i64().is_some_and(|n| n < 0) {
            causes.push((
                format!("spec.{field}"),
                "Invalid value: must be greater than or equal to 0".into(),
            ));
        }
    }
    if spec["activeDeadlineSeconds"]
        .as_i64()
        .is_some_and(|n| n <= 0)
    {
        causes.push((
            "spec.activeDeadlineSeconds".into(),
            "Invalid value: must be greater than 0".into(),
        ));
    }
    let mode = spec["completionMode"].as_str().unwrap_or_default();
    if mode != "NonIndexed" && mode != "Indexed" {
        causes.push((
            "spec.completionMode".into(),
            format!("Unsupported value: \"{mode}\": supported values: \"NonIndexed\", \"Indexed\""),
        ));
    }
    if mode == "Indexed" && spec["completions"].is_null() {
        causes.push((
            "spec.completions".into(),
            "Required value: when completion mode is Indexed".into(),
        ));
    }
    causes.extend(super::pod_failure_policy::validate(spec));
    let restart = spec["template"]["spec"]["restartPolicy"]
        .as_str()
        .unwrap_or_default();
    if restart != "Never" && restart != "OnFailure" {
        causes.push((
            "spec.template.spec.restartPolicy".to_string(),
            format!("Unsupported value: \"{restart}\": supported values: \"OnFailure\", \"Never\""),
        ));
    }
    causes.extend(super::pod_failure_policy::restart_policy(spec, restart));
    if !causes.is_empty() {
        return Err(ApiError::invalid(resource, &name, &causes));
    }
    validate_pod_spec(
        resource,
        &name,
        &obj["spec"]["template"]["spec"],
        "spec.template.spec",
    )?;
    obj["status"] = json!({});
    Ok(())
}

/// The pod spec defaults the API server fills (SetDefaults_PodSpec and friends).
pub(super) fn pod_spec(spec: &mut Value) {
    if !spec.is_object() {
        *spec = json!({});
    }
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    set_default(spec, "securityContext", json!({}));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    if let Some(containers) = spec.get_mut("containers").and_then(Value::as_array_mut) {
        for c in containers {
            set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
            set_default(c, "terminationMessagePolicy", json!("File"));
            set_default(c, "resources", json!({}));
            let image = c["image"].as_str().unwrap_or_default();
            let last = image.rsplit('/').next().unwrap_or_default();
            let latest = !last.contains(':') || last.ends_with(":latest");
            let pull = if latest && !image.contains('@') {
                "Always"
            } else {
                "IfNotPresent"
            };
            set_default(c, "imagePullPolicy", json!(pull));
            for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                if let Some(probe) = c.get_mut(probe).filter(|p| p.is_object()) {
                    probe_defaults(probe);
                }
            }
        }
    }
}

/// `SetDefaults_Probe` and `SetDefaults_HTTPGetAction`.
fn probe_defaults(probe: &mut Value) {
    set_default(probe, "timeoutSeconds", json!(1));
    set_default(probe, "periodSeconds", json!(10));
    set_default(probe, "successThreshold", json!(1));
    set_default(probe, "failureThreshold", json!(3));
    if let Some(http) = probe.get_mut("httpGet").filter(|h| h.is_object()) {
        set_default(http, "path", json!("/"));
        set_default(http, "scheme", json!("HTTP"));
    }
}

pub(super) fn validate_pod_spec(
    resource: &ResourceType,
    name: &str,
    spec: &Value,
    at: &str,
) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    match spec["containers"].as_array() {
        Some(cs) if !cs.is_empty() => {
            for (i, c) in cs.iter().enumerate() {
                let cname = c["name"].as_str().unwrap_or_default();
                let field = format!("{at}.containers[{i}].name");
                if cname.is_empty() {
                    causes.push((field, "Required value".into()));
                } else {
                    for problem in names::rfc1123_label(cname) {
                        causes.push((
                            field.clone(),
                            format!("Invalid value: \"{cname}\": {problem}"),
                        ));
                    }
                }
                if c["image"].as_str().is_none_or(|s| s.trim().is_empty()) {
                    causes.push((
                        format!("{at}.containers[{i}].image"),
                        "Required value".into(),
                    ));
                }
            }
        }
        _ => causes.push((format!("{at}.containers"), "Required value".into())),
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(resource, name, &causes))
    }
}

fn qos_class(spec: &Value) -> &'static str {
    let containers = spec["containers"].as_array().cloned().unwrap_or_default();
    let any = containers.iter().any(|c| {
        c.pointer("/resources/requests")
            .is_some_and(|r| r.as_object().is_some_and(|m| !m.is_empty()))
            || c.pointer("/resources/limits")
                .is_some_and(|r| r.as_object().is_some_and(|m| !m.is_empty()))
    });
    if !any {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        let limits = c.pointer("/resources/limits");
        let requests = c.pointer("/resources/requests");
        ["cpu", "memory"].iter().all(|r| {
            let l = limits.and_then(|l| l.get(*r));
            l.is_some()
                && requests
                    .and_then(|q| q.get(*r))
                    .is_none_or(|q| Some(q) == l)
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

fn service(obj: &mut Value) {
    let spec = &mut obj["spec"];
    if !spec.is_object() {
        *spec = json!({});
    }
    set_default(spec, "type", json!("ClusterIP"));
    set_default(spec, "sessionAffinity", json!("None"));
    set_default(spec, "internalTrafficPolicy", json!("Cluster"));
    set_default(spec, "ipFamilies", json!(["IPv4"]));
    set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
    if spec
        .get("clusterIP")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        use rand::Rng;
        let mut rng = rand::rng();
        spec["clusterIP"] = json!(format!(
            "10.8.{}.{}",
            rng.random_range(0..255),
            rng.random_range(1..255)
        ));
    }
    let ip = spec["clusterIP"].clone();
    spec["clusterIPs"] = json!([ip]);
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports {
            set_default(p, "protocol", json!("TCP"));
            let port = p["port"].clone();
            set_default(p, "targetPort", port);
        }
    }
    obj["status"] = json!({"loadBalancer": {}});
}

/// `ValidateService`'s check of `loadBalancerSourceRanges`: CIDRs (a bare address is none), on a
/// LoadBalancer only. The field is named as upstream names it, capitalised.
fn source_ranges(resource: &ResourceType, obj: &Value) -> Result<(), ApiError> {
    let Some(ranges) = obj
        .pointer("/spec/loadBalancerSourceRanges")
        .and_then(Value::as_array)
        .filter(|r| !r.is_empty())
    else {
        return Ok(());
    };
    let field = "spec.LoadBalancerSourceRanges".to_string();
    let mut causes = Vec::new();
    if obj.pointer("/spec/type").and_then(Value::as_str) != Some("LoadBalancer") {
        causes.push((
            field.clone(),
            "Forbidden: may only be used when `type` is 'LoadBalancer'".to_string(),
        ));
    }
    let listed: Vec<&str> = ranges.iter().map(|r| r.as_str().unwrap_or("")).collect();
    if listed
        .iter()
        .any(|r| r.trim().parse::<ipnet::IpNet>().is_err())
    {
        // Go's %v of the list, and upstream's trailing space.
        causes.push((
            field,
            format!(
                "Invalid value: \"[{}]\": must be a list of IP ranges. For example, \
                 10.240.0.0/24,10.250.0.0/24 ",
                listed.join(" ")
            ),
        ));
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(resource, meta::name(obj), &causes))
    }
}
