//! A request's attributes read from its method, path and query, as kube-apiserver's
//! `RequestInfoFactory.NewRequestInfo` reads them (`k8s.io/apiserver/pkg/endpoints/request/
//! requestinfo.go`): the verb from the method (`get` without a name is `list`, or `watch` with
//! `watch=true` or the `/watch/` prefix; `delete` without a name is `deletecollection`), the
//! group, version, namespace, resource, name and subresource from the path, and a list or watch
//! narrowed to one name by `fieldSelector=metadata.name=…` authorized as that name. Anything
//! outside `/api` and `/apis/GROUP` is a non-resource path with the method as its verb.

use std::collections::HashMap;

use axum::extract::Query;
use http::{Method, Uri};

use crate::kube::rbac::RequestAttributes;
use crate::kube::selectors::FieldSelector;

/// Namespace subresources: `/namespaces/NAME/status` is the namespace's, not a resource's.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

pub fn resolve(method: &Method, uri: &Uri) -> RequestAttributes {
    let path = uri.path();
    let mut info = RequestAttributes {
        verb: method.as_str().to_ascii_lowercase(),
        path: path.to_string(),
        ..RequestAttributes::default()
    };
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() < 3 {
        return info;
    }
    let mut rest: &[&str] = match parts[0] {
        "api" => &parts[1..],
        "apis" if parts.len() >= 4 => {
            info.api_group = parts[1].to_string();
            &parts[2..]
        }
        _ => return info,
    };
    info.resource_request = true;
    info.api_version = rest[0].to_string();
    rest = &rest[1..];
    if rest.first().is_some_and(|p| *p == "watch" || *p == "proxy") && rest.len() >= 2 {
        info.verb = rest[0].to_string();
        rest = &rest[1..];
    } else {
        info.verb = match *method {
            Method::POST => "create",
            Method::GET | Method::HEAD => "get",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE => "delete",
            _ => "",
        }
        .to_string();
    }
    if rest.first() == Some(&"namespaces")
        && let Some(namespace) = rest.get(1)
    {
        info.namespace = namespace.to_string();
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest = &rest[2..];
        }
    }
    if rest.len() >= 3 && info.verb != "proxy" {
        info.subresource = rest[2].to_string();
    }
    if let Some(name) = rest.get(1) {
        info.name = name.to_string();
    }
    if let Some(resource) = rest.first() {
        info.resource = resource.to_string();
    }
    if info.name.is_empty() && info.verb == "get" {
        let query: HashMap<String, String> = Query::try_from_uri(uri)
            .map(|Query(q)| q)
            .unwrap_or_default();
        let watch = query
            .get("watch")
            .is_some_and(|w| !matches!(w.to_ascii_lowercase().as_str(), "false" | "0"));
        info.verb = if watch { "watch" } else { "list" }.to_string();
        if let Some(name) = query
            .get("fieldSelector")
            .and_then(|s| FieldSelector::parse(s).ok())
            .and_then(|s| s.name().map(String::from))
            .filter(|n| !n.contains('/') && !n.contains('%') && n != "." && n != "..")
        {
            info.name = name;
        }
    }
    if info.name.is_empty() && info.verb == "delete" {
        info.verb = "deletecollection".into();
    }
    info
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn info(method: Method, uri: &str) -> RequestAttributes {
        resolve(&method, &uri.parse().unwrap())
    }

    #[test]
    fn a_get_without_a_name_is_a_list_or_a_watch() {
        let list = info(Method::GET, "/api/v1/namespaces/ml/secrets");
        assert_eq!(
            (
                list.verb.as_str(),
                list.resource.as_str(),
                list.namespace.as_str()
            ),
            ("list", "secrets", "ml")
        );
        assert!(list.resource_request && list.api_group.is_empty());
        assert_eq!(info(Method::GET, "/api/v1/pods?watch=true").verb, "watch");
        assert_eq!(info(Method::GET, "/api/v1/pods?watch=0").verb, "list");
        let legacy = info(Method::GET, "/api/v1/watch/namespaces/ml/pods/p1");
        assert_eq!(
            (legacy.verb.as_str(), legacy.name.as_str()),
            ("watch", "p1")
        );
        let named = info(
            Method::GET,
            "/apis/apps/v1/namespaces/ml/deployments?fieldSelector=metadata.name%3Dweb&watch=1",
        );
        assert_eq!(
            (
                named.verb.as_str(),
                named.api_group.as_str(),
                named.name.as_str()
            ),
            ("watch", "apps", "web")
        );
    }

    #[test]
    fn methods_subresources_and_collections_give_their_verbs() {
        let token = info(
            Method::POST,
            "/api/v1/namespaces/ml/serviceaccounts/gantry/token",
        );
        assert_eq!(
            (
                token.verb.as_str(),
                token.resource.as_str(),
                token.name.as_str(),
                token.subresource.as_str()
            ),
            ("create", "serviceaccounts", "gantry", "token")
        );
        let log = info(Method::GET, "/api/v1/namespaces/ml/pods/p1/log");
        assert_eq!(
            (log.verb.as_str(), log.subresource.as_str()),
            ("get", "log")
        );
        assert_eq!(
            info(Method::DELETE, "/api/v1/namespaces/ml/pods").verb,
            "deletecollection"
        );
        assert_eq!(
            info(Method::DELETE, "/api/v1/namespaces/ml/pods/p1").verb,
            "delete"
        );
        assert_eq!(
            info(
                Method::PATCH,
                "/apis/apps/v1/namespaces/ml/deployments/web/scale"
            )
            .verb,
            "patch"
        );
        let status = info(Method::PUT, "/api/v1/namespaces/ml/status");
        assert_eq!(
            (
                status.resource.as_str(),
                status.name.as_str(),
                status.subresource.as_str()
            ),
            ("namespaces", "ml", "status")
        );
        let nodes = info(Method::GET, "/api/v1/nodes/n1");
        assert_eq!((nodes.namespace.as_str(), nodes.name.as_str()), ("", "n1"));
    }

    #[test]
    fn paths_outside_the_resources_are_non_resource_requests() {
        for path in [
            "/version",
            "/api",
            "/apis",
            "/api/v1",
            "/apis/apps",
            "/apis/apps/v1",
            "/openapi/v3",
            "/healthz",
        ] {
            let r = info(Method::GET, path);
            assert!(!r.resource_request, "{path}");
            assert_eq!((r.verb.as_str(), r.path.as_str()), ("get", path));
        }
    }
}
