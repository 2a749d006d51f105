//! The API server's name rules (`k8s.io/apimachinery/pkg/util/validation`, v0.32): DNS labels,
//! subdomains and qualified names, with the exact messages kube-apiserver sends. The simulator
//! keeps its own copy rather than sharing the client's checks, so that a client that gets a rule
//! wrong is refused here as a real cluster would refuse it.

use super::resources::Kind;

const LABEL_MAX: usize = 63;
const SUBDOMAIN_MAX: usize = 253;

const RFC1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const RFC1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const RFC1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const RFC1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const RFC1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const RFC1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_EXAMPLES: &[&str] = &["MyName", "my.name", "123-abc"];

/// What is wrong with `value` as an RFC 1123 label (`IsDNS1123Label`); empty when nothing.
pub fn rfc1123_label(value: &str) -> Vec<String> {
    let mut problems = too_long(value, LABEL_MAX);
    if !matches_label(value, false) {
        problems.push(if matches_subdomain(value) {
            // A valid subdomain within the length limit: only the dots are wrong.
            "must not contain dots".to_string()
        } else {
            regex_error(
                RFC1123_LABEL_MSG,
                RFC1123_LABEL_FMT,
                &["my-name", "123-abc"],
            )
        });
    }
    problems
}

/// What is wrong with `value` as an RFC 1123 subdomain (`IsDNS1123Subdomain`).
pub fn rfc1123_subdomain(value: &str) -> Vec<String> {
    let mut problems = too_long(value, SUBDOMAIN_MAX);
    if !matches_subdomain(value) {
        problems.push(regex_error(
            RFC1123_SUBDOMAIN_MSG,
            RFC1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    problems
}

/// What is wrong with `value` as an RFC 1035 label (`IsDNS1035Label`).
pub fn rfc1035_label(value: &str) -> Vec<String> {
    let mut problems = too_long(value, LABEL_MAX);
    if !matches_label(value, true) {
        problems.push(regex_error(
            RFC1035_LABEL_MSG,
            RFC1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    problems
}

/// What is wrong with `value` as a qualified name (`IsQualifiedName`): a name of up to 63
/// characters, optionally behind a DNS subdomain prefix and '/' (label keys, condition types).
pub fn qualified_name(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let name = match value.split('/').collect::<Vec<_>>().as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                problems.push("prefix part must be non-empty".to_string());
            } else {
                let subdomain = rfc1123_subdomain(prefix);
                problems.extend(subdomain.into_iter().map(|p| format!("prefix part {p}")));
            }
            *name
        }
        _ => {
            let rule = regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                QUALIFIED_NAME_EXAMPLES,
            );
            return vec![format!(
                "a qualified name {rule} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        problems.push("name part must be non-empty".to_string());
    } else if name.len() > LABEL_MAX {
        problems.push(format!(
            "name part must be no more than {LABEL_MAX} characters"
        ));
    }
    if !matches_qualified(name) {
        let rule = regex_error(
            QUALIFIED_NAME_MSG,
            QUALIFIED_NAME_FMT,
            QUALIFIED_NAME_EXAMPLES,
        );
        problems.push(format!("name part {rule}"));
    }
    problems
}

/// What is wrong with `name` as the name of an object of `kind`: each kind's registry names
/// its rule (`ValidateServiceName` is a DNS-1035 label, `ValidateNamespaceName` an RFC 1123
/// label, the rest RFC 1123 subdomains).
pub fn object_name(kind: Kind, name: &str) -> Vec<String> {
    match kind {
        Kind::Service => rfc1035_label(name),
        Kind::Namespace => rfc1123_label(name),
        Kind::Pod
        | Kind::Job
        | Kind::Node
        | Kind::Event
        | Kind::ConfigMap
        | Kind::Secret
        | Kind::Lease => rfc1123_subdomain(name),
        Kind::ServiceAccount | Kind::Deployment | Kind::ReplicaSet => rfc1123_subdomain(name),
        // `ValidateRBACName` is `path.IsValidPathSegmentName`: `system:discovery` is a name.
        Kind::Role | Kind::RoleBinding | Kind::ClusterRole | Kind::ClusterRoleBinding => {
            path_segment(name)
        }
        // Reviews are answered, never stored: their name is not looked at.
        _ => Vec::new(),
    }
}

/// `path.IsValidPathSegmentName`: anything a URL path segment can hold.
fn path_segment(name: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if name == "." || name == ".." {
        problems.push(format!("may not be '{name}'"));
    }
    for bad in ["/", "%"] {
        if name.contains(bad) {
            problems.push(format!("may not contain '{bad}'"));
        }
    }
    problems
}

fn too_long(value: &str, max: usize) -> Vec<String> {
    if value.len() > max {
        vec![format!("must be no more than {max} characters")]
    } else {
        Vec::new()
    }
}

/// `RegexError`: the message, examples and the pattern, as the API server words it.
fn regex_error(message: &str, pattern: &str, examples: &[&str]) -> String {
    // Upstream appends "', " after each example and " or " between them: two spaces.
    let examples: String = examples
        .iter()
        .map(|e| format!("'{e}', "))
        .collect::<Vec<_>>()
        .join(" or ");
    format!("{message} (e.g. {examples}regex used for validation is '{pattern}')")
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, or with `letter_first` `[a-z]([-a-z0-9]*[a-z0-9])?`; the
/// length is checked apart, as upstream does.
fn matches_label(value: &str, letter_first: bool) -> bool {
    let bytes = value.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let first_ok = if letter_first {
        first.is_ascii_lowercase()
    } else {
        alnum(first)
    };
    first_ok && alnum(last) && bytes.iter().all(|b| alnum(b) || *b == b'-')
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn matches_qualified(value: &str) -> bool {
    let bytes = value.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn matches_subdomain(value: &str) -> bool {
    value.split('.').all(|label| matches_label(label, false))
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
