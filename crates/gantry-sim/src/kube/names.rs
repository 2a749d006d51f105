//! The API server's name rules (`k8s.io/apimachinery/pkg/util/validation`, v0.32): DNS labels
//! and subdomains, with the exact messages kube-apiserver sends. The simulator keeps its own
//! copy rather than sharing the client's checks, so that a client that gets a rule wrong is
//! refused here as a real cluster would refuse it.

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

/// What is wrong with `name` as the name of an object of `kind`: each kind's registry names
/// its rule (`ValidateServiceName` is a DNS-1035 label, `ValidateNamespaceName` an RFC 1123
/// label, the rest RFC 1123 subdomains).
pub fn object_name(kind: Kind, name: &str) -> Vec<String> {
    match kind {
        Kind::Service => rfc1035_label(name),
        Kind::Namespace => rfc1123_label(name),
        Kind::Pod | Kind::Job | Kind::Node | Kind::Event | Kind::ConfigMap => {
            rfc1123_subdomain(name)
        }
    }
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

fn matches_subdomain(value: &str) -> bool {
    value.split('.').all(|label| matches_label(label, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The good and bad values of apimachinery's validation_test.go (v0.32).
    const LABEL_GOOD: &[&str] = &[
        "a",
        "ab",
        "abc",
        "a1",
        "a-1",
        "a--1--2--b",
        "0",
        "01",
        "012",
        "1a",
        "1-a",
        "1--a--b--2",
    ];
    const LABEL_BAD: &[&str] = &[
        "", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a",
        "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a.b", "1.", ".1", "1.2", " ", "a ", " a",
        "a b", "1 ", " 1", "1 2",
    ];

    #[test]
    fn rfc1123_labels_as_apimachinery_tests_them() {
        for good in LABEL_GOOD.iter().copied().chain([&*"a".repeat(63)]) {
            assert!(rfc1123_label(good).is_empty(), "{good:?}");
        }
        for bad in LABEL_BAD.iter().copied().chain([&*"a".repeat(64)]) {
            assert!(!rfc1123_label(bad).is_empty(), "{bad:?}");
        }
    }

    #[test]
    fn rfc1123_subdomains_as_apimachinery_tests_them() {
        let good = [
            "a.a",
            "ab.a",
            "abc.a",
            "a1.a",
            "a-1.a",
            "a--1--2--b.a",
            "a.1",
            "ab.1",
            "abc.1",
            "a1.1",
            "a-1.1",
            "a--1--2--b.1",
            "0.a",
            "01.a",
            "012.a",
            "1a.a",
            "1-a.a",
            "1--a--b--2",
            "0.1",
            "01.1",
            "012.1",
            "1a.1",
            "1-a.1",
            "1--a--b--2.1",
            "a.b.c.d.e",
            "aa.bb.cc.dd.ee",
            "1.2.3.4.5",
            "11.22.33.44.55",
        ];
        let long_good = "a".repeat(253);
        for v in LABEL_GOOD.iter().chain(&good).copied().chain([&*long_good]) {
            assert!(rfc1123_subdomain(v).is_empty(), "{v:?}");
        }
        let bad = [
            "",
            "A",
            "ABC",
            "aBc",
            "A1",
            "A-1",
            "1-A",
            "-",
            "a-",
            "-a",
            "1-",
            "-1",
            "_",
            "a_",
            "_a",
            "a_b",
            "1_",
            "_1",
            "1_2",
            ".",
            "a.",
            ".a",
            "a..b",
            "1.",
            ".1",
            "1..2",
            " ",
            "a ",
            " a",
            "a b",
            "1 ",
            " 1",
            "1 2",
            "A.a",
            "aB.a",
            "ab.A",
            "A1.a",
            "a1.A",
            "A.1",
            "aB.1",
            "A1.1",
            "1A.1",
            "0.A",
            "01.A",
            "012.A",
            "1A.a",
            "1a.A",
            "A.B.C.D.E",
            "AA.BB.CC.DD.EE",
            "a.B.c.d.e",
            "aa.bB.cc.dd.ee",
            "a@b",
            "a,b",
            "a_b",
            "a;b",
            "a:b",
            "a%b",
            "a?b",
            "a$b",
        ];
        for v in bad.iter().copied().chain([&*"a".repeat(254)]) {
            assert!(!rfc1123_subdomain(v).is_empty(), "{v:?}");
        }
    }

    #[test]
    fn rfc1035_labels_as_apimachinery_tests_them() {
        for good in ["a", "ab", "abc", "a1", "a-1", "a--1--2--b"]
            .into_iter()
            .chain([&*"a".repeat(63)])
        {
            assert!(rfc1035_label(good).is_empty(), "{good:?}");
        }
        let digits_first = ["0", "01", "012", "1a", "1-a", "1--a--b--2"];
        for bad in digits_first
            .iter()
            .chain(LABEL_BAD)
            .copied()
            .chain([&*"a".repeat(64)])
        {
            assert!(!rfc1035_label(bad).is_empty(), "{bad:?}");
        }
    }

    #[test]
    fn problems_are_worded_as_the_api_server_words_them() {
        assert_eq!(
            rfc1123_label("Main"),
            [
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(rfc1123_label("a.b"), ["must not contain dots"]);
        assert_eq!(
            rfc1123_subdomain(&"a".repeat(254)),
            ["must be no more than 253 characters"]
        );
        assert_eq!(
            rfc1123_subdomain("Web"),
            [
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ]
        );
        let long_upper = "A".repeat(64);
        assert_eq!(rfc1035_label(&long_upper).len(), 2);
        assert!(rfc1035_label("1web")[0].starts_with("a DNS-1035 label must consist"));
    }

    #[test]
    fn each_kind_names_its_rule() {
        assert!(object_name(Kind::Pod, "train.v1").is_empty());
        assert!(!object_name(Kind::Namespace, "team.a").is_empty());
        assert!(!object_name(Kind::Service, "1web").is_empty());
        assert!(object_name(Kind::Namespace, "1team").is_empty());
    }
}
