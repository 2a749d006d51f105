//! What can go wrong talking to GKE, each with the exit code of the scriptable commands
//! (1: the cloud said no or the operation failed, 2: bad input) and the fix where there is one.

use google_cloud_gax::error::Error as GaxError;
use google_cloud_gax::error::rpc::Code;

pub const ADC_FIX: &str =
    "run `gcloud auth application-default login`, or pass --access-token-file FILE";

#[derive(Debug, thiserror::Error)]
pub enum GkeError {
    /// Something the user must give or fix locally: no project, no location, a bad flag.
    #[error("{0}")]
    BadInput(String),

    /// No usable credentials on this machine (before any request).
    #[error("no Google Cloud credentials: {message}; {ADC_FIX}")]
    Credentials { message: String },

    /// GKE refused the token (401).
    #[error("GKE refused the credentials (401 UNAUTHENTICATED): {message}; {ADC_FIX}")]
    Unauthenticated { message: String },

    /// The account may not do this (403).
    #[error("permission denied (403 PERMISSION_DENIED): {message}")]
    PermissionDenied { message: String },

    /// GKE answered with another error (400, 404, 409, 429, 5xx…), after retries where they apply.
    #[error("GKE said {status}{}: {message}", code.map(|c| format!(" ({c})")).unwrap_or_default())]
    Api {
        code: Option<u16>,
        status: String,
        message: String,
    },

    /// A create or delete operation ended with an error (quota, a failed stage…).
    #[error("{kind} of cluster {cluster} failed: {message}")]
    OperationFailed {
        kind: &'static str,
        cluster: String,
        message: String,
    },

    /// The cluster exists but is not in a state Gantry can use.
    #[error("cluster {cluster} is {status}{}", if message.is_empty() { String::new() } else { format!(": {message}") })]
    NotReady {
        cluster: String,
        status: super::ClusterStatus,
        message: String,
    },

    /// There is no such cluster.
    #[error("cluster {cluster} does not exist; create it with `gantry up`")]
    NotFound { cluster: String },

    /// The endpoint could not be reached or answered something that is not the Container API.
    #[error("cannot talk to GKE at {endpoint}: {message}")]
    Transport { endpoint: String, message: String },

    /// Building the Kubernetes client for the cluster failed.
    #[error("cannot build a Kubernetes client for {cluster}: {message}")]
    Kube { cluster: String, message: String },
}

impl GkeError {
    /// 2 for bad input (including missing credentials), 1 for everything the cloud refused.
    pub fn exit_code(&self) -> i32 {
        match self {
            GkeError::BadInput(_) | GkeError::Credentials { .. } => 2,
            _ => 1,
        }
    }

    /// Classifies an error of the Container API client.
    pub fn from_gax(e: &GaxError, endpoint: &str) -> Self {
        if e.is_authentication() {
            return GkeError::Credentials {
                message: source_chain(e),
            };
        }
        if let Some(status) = e.status() {
            let message = status.message.clone();
            return match (e.http_status_code(), &status.code) {
                (Some(401), _) | (_, Code::Unauthenticated) => {
                    GkeError::Unauthenticated { message }
                }
                (Some(403), _) | (_, Code::PermissionDenied) => {
                    GkeError::PermissionDenied { message }
                }
                (code, c) => GkeError::Api {
                    code,
                    status: c.name().to_string(),
                    message,
                },
            };
        }
        if let Some(code) = e.http_status_code() {
            let status = match code {
                401 => {
                    return GkeError::Unauthenticated {
                        message: "the token was refused".into(),
                    };
                }
                403 => {
                    return GkeError::PermissionDenied {
                        message: "the request was refused".into(),
                    };
                }
                404 => "NOT_FOUND",
                409 => "ALREADY_EXISTS",
                429 => "RESOURCE_EXHAUSTED",
                503 => "UNAVAILABLE",
                _ => "an error",
            };
            return GkeError::Api {
                code: Some(code),
                status: status.into(),
                message: source_chain(e),
            };
        }
        GkeError::Transport {
            endpoint: endpoint.to_string(),
            message: source_chain(e),
        }
    }
}

/// The HTTP status of an error, from the HTTP layer or from Google's status code.
pub fn http_status(e: &GaxError) -> Option<u16> {
    e.http_status_code().or_else(|| {
        e.status().map(|s| match s.code {
            Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => 400,
            Code::Unauthenticated => 401,
            Code::PermissionDenied => 403,
            Code::NotFound => 404,
            Code::AlreadyExists | Code::Aborted => 409,
            Code::ResourceExhausted => 429,
            Code::Unavailable => 503,
            Code::DeadlineExceeded => 504,
            _ => 500,
        })
    })
}

/// An error's message with its causes, on one line.
fn source_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}
