//! API errors as the Kubernetes API server reports them: a `Status` object with code and reason.

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{Value, json};

use super::resources::ResourceType;
use super::store::StoreError;

#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Value,
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: Value::Null,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn not_found(resource: &ResourceType, name: &str) -> Self {
        let qualified = qualified(resource);
        Self {
            details: json!({"name": name, "group": resource.group, "kind": resource.plural}),
            ..Self::new(404, "NotFound", format!("{qualified} \"{name}\" not found"))
        }
    }

    pub fn already_exists(resource: &ResourceType, name: &str) -> Self {
        let qualified = qualified(resource);
        Self {
            details: json!({"name": name, "group": resource.group, "kind": resource.plural}),
            ..Self::new(
                409,
                "AlreadyExists",
                format!("{qualified} \"{name}\" already exists"),
            )
        }
    }

    pub fn conflict(resource: &ResourceType, name: &str) -> Self {
        let qualified = qualified(resource);
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {qualified} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
            ),
        )
    }

    /// 422 Unprocessable: the object fails validation; `causes` are (field, message), each
    /// message worded as field.Error's body ("Required value", "Invalid value: …"), whose first
    /// words give the cause its type. Several causes are listed in brackets, as an aggregate
    /// error prints them.
    pub fn invalid(resource: &ResourceType, name: &str, causes: &[(String, String)]) -> Self {
        let mut summary: Vec<String> = Vec::new();
        for line in causes.iter().map(|(f, m)| format!("{f}: {m}")) {
            if !summary.contains(&line) {
                summary.push(line);
            }
        }
        let summary = match summary.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let qualified = format!(
            "{}{}",
            resource.kind_name,
            if resource.group.is_empty() {
                String::new()
            } else {
                format!(".{}", resource.group)
            }
        );
        Self {
            details: json!({
                "name": name,
                "group": resource.group,
                "kind": resource.kind_name,
                "causes": causes.iter().map(|(f, m)| json!({"reason": cause_type(m), "message": m, "field": f})).collect::<Vec<_>>(),
            }),
            ..Self::new(
                422,
                "Invalid",
                format!("{qualified} \"{name}\" is invalid: {summary}"),
            )
        }
    }

    /// 422 for an update without `metadata.resourceVersion` to a kind that allows no
    /// unconditional update. The registry names the resource, not the kind, and prints the
    /// missing version as Go's `%#v` of a uint64 zero.
    pub fn resource_version_required(resource: &ResourceType, name: &str) -> Self {
        let field = "metadata.resourceVersion";
        let message = "Invalid value: 0x0: must be specified for an update";
        Self {
            details: json!({
                "name": name,
                "group": resource.group,
                "kind": resource.plural,
                "causes": [{"reason": "FieldValueInvalid", "message": message, "field": field}],
            }),
            ..Self::new(
                422,
                "Invalid",
                format!(
                    "{} \"{name}\" is invalid: {field}: {message}",
                    qualified(resource)
                ),
            )
        }
    }

    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub fn from_store(e: StoreError, resource: &ResourceType, name: &str) -> Self {
        match e {
            StoreError::NotFound => Self::not_found(resource, name),
            StoreError::AlreadyExists => Self::already_exists(resource, name),
            StoreError::Conflict => Self::conflict(resource, name),
            StoreError::Invalid(m) => Self::invalid(resource, name, &[("metadata".into(), m)]),
        }
    }

    pub fn status_json(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if !self.details.is_null() {
            status["details"] = self.details.clone();
        }
        status
    }
}

/// A validation cause's type (`field.ErrorType`), from the words its message starts with.
fn cause_type(message: &str) -> &'static str {
    const TYPES: &[(&str, &str)] = &[
        ("Required value", "FieldValueRequired"),
        ("Unsupported value", "FieldValueNotSupported"),
        ("Duplicate value", "FieldValueDuplicate"),
        ("Too many", "FieldValueTooMany"),
        ("Too long", "FieldValueTooLong"),
        ("Forbidden", "FieldValueForbidden"),
        ("Not found", "FieldValueNotFound"),
    ];
    TYPES
        .iter()
        .find(|(words, _)| message.starts_with(words))
        .map_or("FieldValueInvalid", |(_, kind)| kind)
}

fn qualified(resource: &ResourceType) -> String {
    if resource.group.is_empty() {
        resource.plural.to_string()
    } else {
        format!("{}.{}", resource.plural, resource.group)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        crate::http_faults::json_response(code, &self.status_json())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::resources::Kind;

    #[test]
    fn an_invalid_object_types_each_cause_by_its_words_and_brackets_several() {
        let jobs = Kind::Job.resource();
        let policy = "only \"Never\" is supported when podFailurePolicy is specified";
        let restart = (
            "spec.template.spec.restartPolicy".to_string(),
            format!("Invalid value: \"OnFailure\": {policy}"),
        );
        let one = ApiError::invalid(jobs, "train", std::slice::from_ref(&restart));
        assert_eq!(
            one.message,
            format!(
                "Job.batch \"train\" is invalid: spec.template.spec.restartPolicy: Invalid value: \"OnFailure\": {policy}"
            )
        );
        assert_eq!(one.details["causes"][0]["reason"], "FieldValueInvalid");
        let action = (
            "spec.podFailurePolicy.rules[0].action".to_string(),
            "Unsupported value: \"Retry\": supported values: \"Count\", \"FailIndex\", \"FailJob\", \"Ignore\"".to_string(),
        );
        let two = ApiError::invalid(jobs, "train", &[action, restart.clone(), restart]);
        assert!(two.message.starts_with("Job.batch \"train\" is invalid: [spec.podFailurePolicy.rules[0].action: Unsupported value: \"Retry\""), "{}", two.message);
        assert!(
            two.message.ends_with(&format!("{policy}]")),
            "{}",
            two.message
        );
        assert_eq!(
            two.message.matches("restartPolicy").count(),
            1,
            "a repeated cause is listed once"
        );
        assert_eq!(two.details["causes"][0]["reason"], "FieldValueNotSupported");
        assert_eq!(two.code, 422);
    }
}
