//! URL routing for the GKE API. Google's URLs put verbs after a colon in the last segment
//! (`operations/OP:cancel`), which axum's router cannot match, so paths are parsed here.
//!
//! Query parameters are tolerated and ignored, except `$alt=json;enum-encoding=int`: the official
//! clients send the deprecated `projectId=&zone=` empty alongside the `locations` form.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use http::{Method, StatusCode, Uri};
use serde_json::Value;

use super::errors::{GkeError, GoogleErrors};
use super::schema::{self, Field};
use super::{GkeApi, cluster_requests, handlers, pool_requests, proto_json, versions};
use crate::http_faults::{self, Gate, json_response};

pub fn router(api: Arc<GkeApi>) -> Router {
    let gate = Gate {
        shared: api.shared.clone(),
        shape: Arc::new(GoogleErrors {
            auth: api.shared.auth.clone(),
        }),
    };
    Router::new()
        .fallback(dispatch)
        .with_state(api)
        .layer(axum::middleware::from_fn(super::iam::scopes))
        .layer(axum::middleware::from_fn_with_state(
            gate,
            http_faults::gate,
        ))
}

/// Custom methods, after a colon in the `locations` form (`nodePools/P:setSize`) or as a last
/// segment in the older `zones` form (`nodePools/P/setSize`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Verb {
    SetSize,
    SetAutoscaling,
    /// `zones/Z/clusters/C/nodePools/P/update`; the `locations` form is a PUT of the pool.
    Update,
    SetResourceLabels,
}

#[derive(Debug, Clone, PartialEq)]
enum Target {
    Clusters,
    Cluster(String),
    ClusterVerb(String, Verb),
    NodePools(String),
    NodePool(String, String),
    NodePoolVerb(String, String, Verb),
    Operations,
    Operation(String),
    CancelOperation(String),
    ServerConfig,
    /// Service Usage's view of an API (`/v1/projects/P/services/container.googleapis.com`):
    /// gcloud checks that the API is enabled before creating a cluster.
    Service(String),
}

#[derive(Debug, Clone, PartialEq)]
struct Route {
    project: String,
    /// A region, a zone, or `-` for all of them.
    location: String,
    target: Target,
}

impl Route {
    /// `/v1/projects/P/{locations|zones}/L/…`; both forms name the same resources.
    fn parse(path: &str) -> Option<Self> {
        let rest = path.strip_prefix("/v1/projects/")?;
        let segments: Vec<&str> = rest.split('/').collect();
        if segments.iter().any(|s| s.is_empty()) {
            return None;
        }
        if let [project, "services", service] = segments.as_slice() {
            return Some(Self {
                project: project.to_string(),
                location: "-".to_string(),
                target: Target::Service(service.to_string()),
            });
        }
        let [project, collection, location, tail @ ..] = segments.as_slice() else {
            return None;
        };
        if !matches!(*collection, "locations" | "zones") {
            return None;
        }
        let name = |s: &str| (!s.contains(':')).then(|| s.to_string());
        let target = match tail {
            ["clusters"] => Target::Clusters,
            ["clusters", cluster] => match cluster.split_once(':') {
                Some((c, "setResourceLabels")) => {
                    Target::ClusterVerb(name(c)?, Verb::SetResourceLabels)
                }
                Some(_) => return None,
                None => Target::Cluster(name(cluster)?),
            },
            ["clusters", cluster, "resourceLabels"] => {
                Target::ClusterVerb(name(cluster)?, Verb::SetResourceLabels)
            }
            ["clusters", cluster, "nodePools"] => Target::NodePools(name(cluster)?),
            ["clusters", cluster, "nodePools", pool] => match pool.split_once(':') {
                Some((p, verb)) => {
                    let verb = match verb {
                        "setSize" => Verb::SetSize,
                        "setAutoscaling" => Verb::SetAutoscaling,
                        _ => return None,
                    };
                    Target::NodePoolVerb(name(cluster)?, name(p)?, verb)
                }
                None => Target::NodePool(name(cluster)?, name(pool)?),
            },
            ["clusters", cluster, "nodePools", pool, verb] => {
                let verb = match *verb {
                    "setSize" => Verb::SetSize,
                    "autoscaling" => Verb::SetAutoscaling,
                    "update" => Verb::Update,
                    _ => return None,
                };
                Target::NodePoolVerb(name(cluster)?, name(pool)?, verb)
            }
            ["operations"] => Target::Operations,
            ["operations", op] => match op.strip_suffix(":cancel") {
                Some(op) => Target::CancelOperation(name(op)?),
                None => Target::Operation(name(op)?),
            },
            ["serverConfig" | "serverconfig"] => Target::ServerConfig,
            _ => return None,
        };
        Some(Self {
            project: project.to_string(),
            location: location.to_string(),
            target,
        })
    }

    /// The IAM permission GKE checks, and the resource it names in a PERMISSION_DENIED.
    fn permission(&self, method: &Method) -> (&'static str, String) {
        let parent = format!("projects/{}/locations/{}", self.project, self.location);
        match &self.target {
            Target::Clusters if method == Method::POST => ("container.clusters.create", parent),
            Target::Clusters => ("container.clusters.list", parent),
            Target::Cluster(c) if method == Method::DELETE => (
                "container.clusters.delete",
                format!("{parent}/clusters/{c}"),
            ),
            // Every change to a cluster or its node pools needs the update permission.
            Target::ClusterVerb(c, _) | Target::NodePoolVerb(c, _, _) => (
                "container.clusters.update",
                format!("{parent}/clusters/{c}"),
            ),
            Target::Cluster(c) | Target::NodePools(c) | Target::NodePool(c, _)
                if method != Method::GET =>
            {
                (
                    "container.clusters.update",
                    format!("{parent}/clusters/{c}"),
                )
            }
            Target::Cluster(c) | Target::NodePools(c) | Target::NodePool(c, _) => {
                ("container.clusters.get", format!("{parent}/clusters/{c}"))
            }
            Target::Operations => ("container.operations.list", parent),
            Target::Operation(op) | Target::CancelOperation(op) => (
                "container.operations.get",
                format!("{parent}/operations/{op}"),
            ),
            Target::ServerConfig => ("container.clusters.list", parent),
            Target::Service(service) => (
                "serviceusage.services.get",
                format!("projects/{}/services/{service}", self.project),
            ),
        }
    }
}

async fn dispatch(
    State(api): State<Arc<GkeApi>>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    let numbers = enums_as_numbers(&uri);
    match handle(&api, &method, uri.path(), &body) {
        Ok((answer, message)) => json_response(
            StatusCode::OK,
            &proto_json::encode(answer, message, numbers),
        ),
        Err(e) => e.into_response(),
    }
}

/// Whether the client asked for enums as numbers, as the official Rust client does.
fn enums_as_numbers(uri: &Uri) -> bool {
    Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map(|Query(params)| {
            params
                .iter()
                .any(|(k, v)| k == "$alt" && v.split(';').any(|p| p.trim() == "enum-encoding=int"))
        })
        .unwrap_or(false)
}

type Answer = (Value, &'static [Field]);

fn handle(api: &Arc<GkeApi>, method: &Method, path: &str, body: &[u8]) -> Result<Answer, GkeError> {
    let route = Route::parse(path).ok_or_else(|| GkeError::no_such_method(method, path))?;
    if api.shared.faults.gke_permission_denied() {
        let (permission, resource) = route.permission(method);
        return Err(GkeError::permission_denied(format!(
            "Required \"{permission}\" permission(s) for \"{resource}\"."
        )));
    }
    let (p, l) = (route.project.as_str(), route.location.as_str());
    let answer = match (method.clone(), &route.target) {
        (Method::GET, Target::Clusters) => {
            (handlers::list_clusters(api, p, l)?, schema::LIST_CLUSTERS)
        }
        (Method::POST, Target::Clusters) => (
            handlers::create_cluster(api, p, l, json_body(body)?)?,
            schema::OPERATION,
        ),
        (Method::GET, Target::Cluster(c)) => {
            (handlers::get_cluster(api, p, l, c)?, schema::CLUSTER)
        }
        (Method::DELETE, Target::Cluster(c)) => {
            (handlers::delete_cluster(api, p, l, c)?, schema::OPERATION)
        }
        (Method::GET, Target::NodePools(c)) => (
            handlers::list_node_pools(api, p, l, c)?,
            schema::LIST_NODE_POOLS,
        ),
        (Method::GET, Target::NodePool(c, pool)) => (
            handlers::get_node_pool(api, p, l, c, pool)?,
            schema::NODE_POOL,
        ),
        (Method::PUT, Target::Cluster(c)) => (
            cluster_requests::update(api, (p, l, c), json_body(body)?)?,
            schema::OPERATION,
        ),
        (Method::POST, Target::ClusterVerb(c, Verb::SetResourceLabels)) => (
            cluster_requests::set_labels(api, (p, l, c), json_body(body)?)?,
            schema::OPERATION,
        ),
        (Method::POST, Target::NodePools(c)) => (
            pool_requests::create(api, (p, l, c), json_body(body)?)?,
            schema::OPERATION,
        ),
        (Method::DELETE, Target::NodePool(c, pool)) => (
            pool_requests::delete(api, (p, l, c), pool)?,
            schema::OPERATION,
        ),
        (Method::PUT, Target::NodePool(c, pool))
        | (Method::POST, Target::NodePoolVerb(c, pool, Verb::Update)) => (
            pool_requests::update(api, (p, l, c), pool, json_body(body)?)?,
            schema::OPERATION,
        ),
        (Method::POST, Target::NodePoolVerb(c, pool, Verb::SetSize)) => (
            pool_requests::set_size(api, (p, l, c), pool, json_body(body)?)?,
            schema::OPERATION,
        ),
        (Method::POST, Target::NodePoolVerb(c, pool, Verb::SetAutoscaling)) => (
            pool_requests::set_autoscaling(api, (p, l, c), pool, json_body(body)?)?,
            schema::OPERATION,
        ),
        (Method::GET, Target::Operations) => (
            handlers::list_operations(api, p, l)?,
            schema::LIST_OPERATIONS,
        ),
        (Method::GET, Target::Operation(op)) => {
            (handlers::get_operation(api, p, l, op)?, schema::OPERATION)
        }
        (Method::POST, Target::CancelOperation(op)) => {
            json_body(body)?;
            (handlers::cancel_operation(api, p, l, op)?, &[][..])
        }
        (Method::GET, Target::ServerConfig) => (versions::server_config(), schema::SERVER_CONFIG),
        (Method::GET, Target::Service(service)) => (enabled_service(p, service), &[][..]),
        _ => return Err(GkeError::no_such_method(method, path)),
    };
    Ok(answer)
}

/// Every API is enabled in the simulated cloud.
fn enabled_service(project: &str, service: &str) -> Value {
    serde_json::json!({
        "name": format!("projects/{project}/services/{service}"),
        "parent": format!("projects/{project}"),
        "state": "ENABLED",
        "config": {"name": service},
    })
}

/// A request body as JSON; an empty body is an empty message.
fn json_body(body: &[u8]) -> Result<Value, GkeError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_slice(body)
        .map_err(|e| GkeError::invalid(format!("Invalid JSON payload received. {e}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn target(path: &str) -> Option<Target> {
        Route::parse(path).map(|r| r.target)
    }

    #[test]
    fn parses_both_url_forms() {
        let route = Route::parse("/v1/projects/p/locations/us-central1/clusters/c").unwrap();
        assert_eq!(
            (route.project.as_str(), route.location.as_str()),
            ("p", "us-central1")
        );
        assert_eq!(route.target, Target::Cluster("c".into()));
        assert_eq!(
            target("/v1/projects/p/zones/us-central1-a/clusters"),
            Some(Target::Clusters)
        );
        assert_eq!(
            target("/v1/projects/p/zones/z/clusters/c/nodePools/default-pool"),
            Some(Target::NodePool("c".into(), "default-pool".into()))
        );
        assert_eq!(
            target("/v1/projects/p/locations/l/operations/operation-1:cancel"),
            Some(Target::CancelOperation("operation-1".into()))
        );
        assert_eq!(
            target("/v1/projects/p/zones/z/serverconfig"),
            Some(Target::ServerConfig)
        );
        assert_eq!(
            target("/v1/projects/p/locations/-/clusters"),
            Some(Target::Clusters)
        );
    }

    #[test]
    fn parses_custom_methods_in_both_forms() {
        let pool = |verb| Some(Target::NodePoolVerb("c".into(), "np".into(), verb));
        for (path, want) in [
            (
                "/v1/projects/p/locations/l/clusters/c/nodePools/np:setSize",
                pool(Verb::SetSize),
            ),
            (
                "/v1/projects/p/zones/z/clusters/c/nodePools/np/setSize",
                pool(Verb::SetSize),
            ),
            (
                "/v1/projects/p/locations/l/clusters/c/nodePools/np:setAutoscaling",
                pool(Verb::SetAutoscaling),
            ),
            (
                "/v1/projects/p/zones/z/clusters/c/nodePools/np/autoscaling",
                pool(Verb::SetAutoscaling),
            ),
            (
                "/v1/projects/p/zones/z/clusters/c/nodePools/np/update",
                pool(Verb::Update),
            ),
            (
                "/v1/projects/p/locations/l/clusters/c:setResourceLabels",
                Some(Target::ClusterVerb("c".into(), Verb::SetResourceLabels)),
            ),
            (
                "/v1/projects/p/zones/z/clusters/c/resourceLabels",
                Some(Target::ClusterVerb("c".into(), Verb::SetResourceLabels)),
            ),
        ] {
            assert_eq!(target(path), want, "{path}");
        }
    }

    #[test]
    fn rejects_other_paths() {
        for path in [
            "/v1/projects/p",
            "/v1/projects/p/regions/r/clusters",
            "/v1/projects/p/locations/l/clusters/",
            "/v1/projects/p/locations/l/clusters/c:setLabels",
            "/v1/projects/p/locations/l/clusters/c/nodePools/np:rollback",
            "/v1/projects/p/zones/z/clusters/c/nodePools/np/setManagement",
            "/v1/projects/p/locations/l/clusters/c:np/nodePools",
            "/v2/projects/p/locations/l/clusters",
        ] {
            assert_eq!(target(path), None, "{path}");
        }
    }

    #[test]
    fn reads_the_enum_encoding() {
        let uri: Uri = "/v1/x?projectId=&zone=&%24alt=json%3Benum-encoding%3Dint"
            .parse()
            .unwrap();
        assert!(enums_as_numbers(&uri));
        let uri: Uri = "/v1/x?alt=json".parse().unwrap();
        assert!(!enums_as_numbers(&uri));
    }
}
