//! The fields of a Job manifest the `[job]` section can hold. Any other field with a value is
//! refused by its path: a Kubernetes field Gantry cannot carry, or one that is not a field of a
//! Job at all (a typo, which kubectl would refuse too). A field that is null or empty (`{}`,
//! `[]`, as `kubectl create --dry-run=client -o yaml` writes `creationTimestamp: null` and
//! `status: {}`) says nothing and is let through.

use k8s_openapi::api::batch::v1::Job;
use serde_json::Value as Json;
use serde_norway::Value;

const TOP: &[&str] = &["apiVersion", "kind", "metadata", "spec"];
const METADATA: &[&str] = &["name", "namespace", "labels"];
const SPEC: &[&str] = &[
    "backoffLimit",
    "activeDeadlineSeconds",
    "ttlSecondsAfterFinished",
    "parallelism",
    "completions",
    "completionMode",
    "podFailurePolicy",
    "template",
];
const TEMPLATE: &[&str] = &["metadata", "spec"];
const TEMPLATE_METADATA: &[&str] = &["labels"];
const POD: &[&str] = &[
    "containers",
    "restartPolicy",
    "nodeSelector",
    "tolerations",
    "subdomain",
];
const CONTAINER: &[&str] = &["name", "image", "command", "args", "env", "resources"];
const ENV: &[&str] = &["name", "value", "valueFrom"];
const VALUE_FROM: &[&str] = &["fieldRef"];
const FIELD_REF: &[&str] = &["fieldPath", "apiVersion"];
/// Why a `valueFrom` source other than the completion index is refused.
pub(super) const PLAIN_ENV: &str = "Gantry's [job] env holds plain values only (it sets RANK from the completion index of an Indexed Job itself): give a value, or remove the variable";
const RESOURCES: &[&str] = &["requests", "limits"];
const TOLERATION: &[&str] = &["key", "operator", "value", "effect"];

/// What the API server fills in: a manifest from `kubectl get -o yaml` has them.
const SERVER_SET: &[&str] = &[
    "status",
    "metadata.uid",
    "metadata.resourceVersion",
    "metadata.creationTimestamp",
    "metadata.generation",
    "metadata.managedFields",
    "metadata.selfLink",
    "metadata.deletionTimestamp",
    "metadata.deletionGracePeriodSeconds",
    "spec.selector",
    "spec.manualSelector",
    "spec.template.metadata.creationTimestamp",
];

/// A place in the manifest: the path people read, and the JSON pointer into the typed Job.
struct At {
    path: String,
    pointer: String,
}

impl At {
    fn root() -> Self {
        At {
            path: String::new(),
            pointer: String::new(),
        }
    }

    fn key(&self, key: &str) -> At {
        At {
            path: if self.path.is_empty() {
                key.to_string()
            } else {
                format!("{}.{key}", self.path)
            },
            pointer: format!(
                "{}/{}",
                self.pointer,
                key.replace('~', "~0").replace('/', "~1")
            ),
        }
    }

    fn index(&self, i: usize) -> At {
        At {
            path: format!("{}[{i}]", self.path),
            pointer: format!("{}/{i}", self.pointer),
        }
    }
}

/// Refuses every field with a value that Gantry would not carry into the `[job]` section.
pub(super) fn check(doc: &Value, job: &Job) -> Result<(), String> {
    let typed = serde_json::to_value(job).map_err(|e| format!("the Job: {e}"))?;
    let walk = Walk { typed: &typed };
    let root = At::root();
    walk.keys(Some(doc), &root, TOP)?;
    let metadata = root.key("metadata");
    walk.keys(doc.get("metadata"), &metadata, METADATA)?;

    let spec_at = root.key("spec");
    let spec = doc.get("spec");
    walk.keys(spec, &spec_at, SPEC)?;
    // Kept whole, as written: every key in it must be one Kubernetes knows.
    walk.all_keys(
        spec.and_then(|s| s.get("podFailurePolicy")),
        &spec_at.key("podFailurePolicy"),
    )?;
    let template_at = spec_at.key("template");
    let template = spec.and_then(|s| s.get("template"));
    walk.keys(template, &template_at, TEMPLATE)?;
    walk.keys(
        template.and_then(|t| t.get("metadata")),
        &template_at.key("metadata"),
        TEMPLATE_METADATA,
    )?;
    let pod_at = template_at.key("spec");
    let pod = template.and_then(|t| t.get("spec"));
    walk.keys(pod, &pod_at, POD)?;

    let containers_at = pod_at.key("containers");
    let containers = items(pod.and_then(|p| p.get("containers")));
    if containers.len() > 1 {
        return Err(format!(
            "{}: Gantry runs one training container in each pod (the one whose logs it follows): remove the others",
            containers_at.index(1).path
        ));
    }
    for (i, container) in containers.iter().enumerate() {
        let at = containers_at.index(i);
        walk.keys(Some(container), &at, CONTAINER)?;
        let env_at = at.key("env");
        for (j, var) in items(container.get("env")).iter().enumerate() {
            let var_at = env_at.index(j);
            walk.keys(Some(var), &var_at, ENV)?;
            let from_at = var_at.key("valueFrom");
            let from = var.get("valueFrom");
            walk.keys_or(from, &from_at, VALUE_FROM, Some(PLAIN_ENV))?;
            walk.keys_or(
                from.and_then(|f| f.get("fieldRef")),
                &from_at.key("fieldRef"),
                FIELD_REF,
                Some(PLAIN_ENV),
            )?;
        }
        walk.keys(container.get("resources"), &at.key("resources"), RESOURCES)?;
    }
    let tolerations_at = pod_at.key("tolerations");
    for (i, toleration) in items(pod.and_then(|p| p.get("tolerations")))
        .iter()
        .enumerate()
    {
        walk.keys(Some(toleration), &tolerations_at.index(i), TOLERATION)?;
    }
    Ok(())
}

fn items(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_sequence)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Null, `{}` or `[]`: says nothing.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Mapping(m) => m.is_empty(),
        Value::Sequence(s) => s.is_empty(),
        Value::Tagged(t) => is_empty(&t.value),
        _ => false,
    }
}

struct Walk<'a> {
    /// The Job as Kubernetes' types read it: a key it lacks is not a Job field.
    typed: &'a Json,
}

impl Walk<'_> {
    /// Refuses the first key of the mapping `v` (at `at`) outside `allowed` that has a value.
    fn keys(&self, v: Option<&Value>, at: &At, allowed: &[&str]) -> Result<(), String> {
        self.keys_or(v, at, allowed, None)
    }

    /// Refuses the first key, at any depth under `at`, that Kubernetes' types do not have (a
    /// typo that serde would drop without a word).
    fn all_keys(&self, v: Option<&Value>, at: &At) -> Result<(), String> {
        match v {
            Some(Value::Mapping(map)) => {
                for (key, value) in map {
                    if is_empty(value) {
                        continue;
                    }
                    let Some(name) = key.as_str() else {
                        return Err(format!(
                            "{}: a key that is not a string ({}): not a field of a batch/v1 Job",
                            at.path,
                            scalar(key)
                        ));
                    };
                    let field = at.key(name);
                    if self.typed.pointer(&field.pointer).is_none() {
                        return Err(self.refusal(&field, name));
                    }
                    self.all_keys(Some(value), &field)?;
                }
                Ok(())
            }
            Some(Value::Sequence(items)) => items
                .iter()
                .enumerate()
                .try_for_each(|(i, item)| self.all_keys(Some(item), &at.index(i))),
            Some(Value::Tagged(t)) => self.all_keys(Some(&t.value), at),
            _ => Ok(()),
        }
    }

    /// As [`Walk::keys`], saying `why` when the key is a Job field Gantry does not carry.
    fn keys_or(
        &self,
        v: Option<&Value>,
        at: &At,
        allowed: &[&str],
        why: Option<&str>,
    ) -> Result<(), String> {
        let Some(map) = v.and_then(Value::as_mapping) else {
            return Ok(());
        };
        for (key, value) in map {
            if is_empty(value) {
                continue;
            }
            let Some(key) = key.as_str() else {
                return Err(format!(
                    "{}: a key that is not a string ({}): not a field of a batch/v1 Job",
                    if at.path.is_empty() {
                        "the Job"
                    } else {
                        &at.path
                    },
                    scalar(key)
                ));
            };
            if allowed.contains(&key) {
                continue;
            }
            let field = at.key(key);
            return Err(match why {
                Some(why) if self.typed.pointer(&field.pointer).is_some() => {
                    format!("{}: {why}", field.path)
                }
                _ => self.refusal(&field, key),
            });
        }
        Ok(())
    }

    fn refusal(&self, field: &At, key: &str) -> String {
        let path = &field.path;
        if key == "<<" {
            return format!(
                "{path}: YAML merge keys are not supported: write the fields out in full"
            );
        }
        if self.typed.pointer(&field.pointer).is_none() {
            return format!(
                "{path}: not a field of a batch/v1 Job (a typo?), so kubectl would refuse it too"
            );
        }
        if SERVER_SET.contains(&path.as_str()) {
            return format!(
                "{path}: set by the API server, not by a manifest (`kubectl get -o yaml` output?): remove it"
            );
        }
        match path.as_str() {
            "metadata.generateName" => format!(
                "{path}: Gantry names the attempts <name>, <name>-2, <name>-3, ...: give metadata.name instead"
            ),
            "metadata.annotations" | "spec.template.metadata.annotations" => format!(
                "{path}: Gantry's [job] section carries no annotations: remove them, or launch this Job with kubectl"
            ),
            _ => format!(
                "{path}: Gantry's [job] section has no place for this field and would drop it: remove it from the manifest, or launch this Job with kubectl (see \"Job manifests\" in the README for what Gantry carries)"
            ),
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        _ => "a mapping or sequence".into(),
    }
}
