//! The name rules against the good and bad values of apimachinery's validation_test.go (v0.32),
//! and the words of their problems.

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
    "", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a", "a_b",
    "1_", "_1", "1_2", ".", "a.", ".a", "a.b", "1.", ".1", "1.2", " ", "a ", " a", "a b", "1 ",
    " 1", "1 2",
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
fn qualified_names_as_apimachinery_tests_them() {
    let good = [
        "simple",
        "now-with-dashes",
        "1-starts-with-num",
        "1234",
        "simple/simple",
        "now.with.dots/simple",
        "1.2.3.4/5678",
        "Uppercase_Is_OK_123",
        "example.com/Uppercase_Is_OK_123",
        "requests.storage-foo",
        "DisruptionTarget",
    ];
    let long_name = "a".repeat(63);
    let long_prefixed = format!("{}/{}", "a".repeat(253), "b".repeat(63));
    for v in good.into_iter().chain([&*long_name, &*long_prefixed]) {
        assert!(qualified_name(v).is_empty(), "{v:?}");
    }
    let bad = [
        "nospecialchars%^=@",
        "cantendwithadash-",
        "-cantstartwithadash-",
        "only/one/slash",
        "Example.com/abc",
        "example_com/abc",
        "example.com/",
        "/simple",
        "",
        "Invalid Condition Type",
    ];
    let too_long = "a".repeat(64);
    let long_prefix = format!("{}/abc", "a".repeat(254));
    for v in bad.into_iter().chain([&*too_long, &*long_prefix]) {
        assert!(!qualified_name(v).is_empty(), "{v:?}");
    }
    assert_eq!(
        qualified_name(""),
        [
            "name part must be non-empty",
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        ]
    );
}

#[test]
fn each_kind_names_its_rule() {
    assert!(object_name(Kind::Pod, "train.v1").is_empty());
    assert!(!object_name(Kind::Namespace, "team.a").is_empty());
    assert!(!object_name(Kind::Service, "1web").is_empty());
    assert!(object_name(Kind::Namespace, "1team").is_empty());
}
