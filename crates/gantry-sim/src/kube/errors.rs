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

    /// 422 Unprocessable: the object fails validation; `causes` are (field, message).
    pub fn invalid(resource: &ResourceType, name: &str, causes: &[(String, String)]) -> Self {
        let summary: Vec<String> = causes.iter().map(|(f, m)| format!("{f}: {m}")).collect();
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
                "causes": causes.iter().map(|(f, m)| json!({"reason": "FieldValueInvalid", "message": m, "field": f})).collect::<Vec<_>>(),
            }),
            ..Self::new(
                422,
                "Invalid",
                format!("{qualified} \"{name}\" is invalid: {}", summary.join(", ")),
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
