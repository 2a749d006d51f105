//! What a request asks (`authorizer.Attributes`) and whether one PolicyRule grants it, as the
//! RBAC authorizer decides (`RuleAllows` and `pkg/apis/rbac/v1/evaluation_helpers.go`): verbs
//! and `*`, API groups and `*`, resources as `resource`, `resource/subresource`, `*` and
//! `*/subresource`, resourceNames, and nonResourceURLs with a trailing `*`.

use serde_json::Value;

/// The attributes of a request, resolved from its method and path (`RequestInfo`) or given by
/// an access review.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestAttributes {
    pub verb: String,
    /// False for paths outside the API's resources (`/version`, `/apis`, `/openapi/v3`).
    pub resource_request: bool,
    pub path: String,
    pub api_group: String,
    pub api_version: String,
    pub namespace: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
}

impl RequestAttributes {
    /// A resource request (tests and reviews spell them this way).
    pub fn resource(verb: &str, group: &str, resource: &str, namespace: &str) -> Self {
        let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
        Self {
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            namespace: namespace.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            ..Self::default()
        }
    }
}

fn strings(v: &Value) -> impl Iterator<Item = &str> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str)
}

pub fn rule_allows(attrs: &RequestAttributes, rule: &Value) -> bool {
    let verb = strings(&rule["verbs"]).any(|v| v == "*" || v == attrs.verb);
    if !attrs.resource_request {
        return verb && non_resource_url_matches(rule, &attrs.path);
    }
    let combined = if attrs.subresource.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}/{}", attrs.resource, attrs.subresource)
    };
    verb && strings(&rule["apiGroups"]).any(|g| g == "*" || g == attrs.api_group)
        && resource_matches(rule, &combined, &attrs.subresource)
        && resource_name_matches(rule, &attrs.name)
}

fn resource_matches(rule: &Value, combined: &str, subresource: &str) -> bool {
    strings(&rule["resources"]).any(|r| {
        r == "*"
            || r == combined
            || (!subresource.is_empty()
                && r.strip_prefix("*/").is_some_and(|sub| sub == subresource))
    })
}

fn resource_name_matches(rule: &Value, name: &str) -> bool {
    let mut names = strings(&rule["resourceNames"]).peekable();
    names.peek().is_none() || names.any(|n| n == name)
}

fn non_resource_url_matches(rule: &Value, path: &str) -> bool {
    strings(&rule["nonResourceURLs"]).any(|url| {
        url == "*"
            || url == path
            || url
                .strip_suffix('*')
                .is_some_and(|prefix| path.starts_with(prefix))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn named(verb: &str, resource: &str, name: &str) -> RequestAttributes {
        RequestAttributes {
            name: name.into(),
            ..RequestAttributes::resource(verb, "", resource, "default")
        }
    }

    #[test]
    fn verbs_groups_and_resources_match_exactly_or_by_star() {
        let rule = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]});
        assert!(rule_allows(&named("list", "pods", ""), &rule));
        assert!(!rule_allows(&named("delete", "pods", "p"), &rule));
        assert!(!rule_allows(&named("list", "secrets", ""), &rule));
        let apps = RequestAttributes::resource("list", "apps", "deployments", "default");
        assert!(!rule_allows(&apps, &rule), "another group");
        let all = json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]});
        assert!(rule_allows(&apps, &all));
    }

    #[test]
    fn a_subresource_needs_its_own_rule_or_a_star_for_it() {
        let pods = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]});
        assert!(!rule_allows(&named("get", "pods/log", "p"), &pods));
        let logs = json!({"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]});
        assert!(rule_allows(&named("get", "pods/log", "p"), &logs));
        assert!(!rule_allows(&named("get", "pods", "p"), &logs));
        let any_log = json!({"apiGroups": [""], "resources": ["*/log"], "verbs": ["get"]});
        assert!(rule_allows(&named("get", "pods/log", "p"), &any_log));
        assert!(!rule_allows(
            &named("create", "pods/portforward", "p"),
            &any_log
        ));
    }

    #[test]
    fn resource_names_limit_a_rule_to_those_objects() {
        let rule = json!({"apiGroups": [""], "resources": ["configmaps"],
            "resourceNames": ["settings"], "verbs": ["get", "list"]});
        assert!(rule_allows(&named("get", "configmaps", "settings"), &rule));
        assert!(!rule_allows(&named("get", "configmaps", "other"), &rule));
        assert!(
            !rule_allows(&named("list", "configmaps", ""), &rule),
            "a list names no object"
        );
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_prefix() {
        let rule = json!({"nonResourceURLs": ["/api", "/apis/*", "/version"], "verbs": ["get"]});
        let path = |p: &str| RequestAttributes {
            verb: "get".into(),
            path: p.into(),
            ..RequestAttributes::default()
        };
        assert!(rule_allows(&path("/api"), &rule));
        assert!(rule_allows(&path("/apis/apps/v1"), &rule));
        assert!(!rule_allows(&path("/api/v1"), &rule));
        assert!(!rule_allows(&path("/metrics"), &rule));
        let resource_rule = json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]});
        assert!(
            !rule_allows(&path("/version"), &resource_rule),
            "resource rules grant no path"
        );
    }
}
