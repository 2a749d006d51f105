//! Names and label syntax as the Kubernetes API server accepts them (RFC 1123 and 1035 names,
//! label keys and values, environment variable names). A leaf: the config file, manifests and
//! Job actions all check names here, before anything is sent.

/// An RFC 1123 label: 1 to 63 lower-case letters, digits or '-', alphanumeric at both ends.
pub fn is_rfc1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// An RFC 1035 label (what a Service name must be): an RFC 1123 label starting with a letter.
pub fn is_rfc1035_label(s: &str) -> bool {
    is_rfc1123_label(s) && s.as_bytes()[0].is_ascii_lowercase()
}

/// An RFC 1123 subdomain: dot-separated labels, at most 253 characters.
pub fn is_rfc1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_rfc1123_label)
}

/// A name the kubelet accepts for an environment variable.
pub fn is_env_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && !b[0].is_ascii_digit()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
}

/// A label value: at most 63 characters, alphanumeric at both ends, `-_.` inside.
pub fn is_label_value(s: &str) -> bool {
    let b = s.as_bytes();
    b.is_empty()
        || (b.len() <= 63
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric())
}

/// A label key (also a node-selector key): a name as `is_label_value` says but not empty,
/// optionally after a DNS subdomain prefix and '/' (`gantry.dev/attempt`).
pub fn is_label_key(s: &str) -> bool {
    let (prefix, name) = match s.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, s),
    };
    prefix.is_none_or(is_rfc1123_subdomain) && !name.is_empty() && is_label_value(name)
}

/// A Kubernetes quantity as the API server reads one: a decimal number and a suffix (`50m`,
/// `1.5`, `64Mi`, `2G`, `1e3`).
pub fn is_quantity(s: &str) -> bool {
    const SUFFIXES: [&str; 14] = [
        "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(end);
    let digits = number.chars().filter(char::is_ascii_digit).count();
    let number_ok = digits > 0 && number.matches('.').count() <= 1;
    let exponent = suffix.strip_prefix(['e', 'E']).is_some_and(|e| {
        !e.is_empty()
            && e.trim_start_matches(['+', '-'])
                .bytes()
                .all(|b| b.is_ascii_digit())
    });
    number_ok && (SUFFIXES.contains(&suffix) || exponent)
}

/// The prefix of the environment variables Gantry sets in the training container itself
/// (`GANTRY_RUN_ID`, `GANTRY_ATTEMPT`, `GANTRY_RECOVERY`): `[job.env]` and `--env` may not use it.
pub const RESERVED_ENV_PREFIX: &str = "GANTRY_";
/// The run's id, the same in every attempt of a run.
pub const RUN_ID_ENV: &str = "GANTRY_RUN_ID";
/// The attempt within the run: 1 for the launch, 2, 3, … for each attempt after it.
pub const ATTEMPT_ENV: &str = "GANTRY_ATTEMPT";
/// How many of the run's attempts Gantry started by itself.
pub const RECOVERY_ENV: &str = "GANTRY_RECOVERY";

/// The error for an environment variable a Job may not set, or None.
pub fn reserved_env(name: &str, place: &str) -> Option<String> {
    name.starts_with(RESERVED_ENV_PREFIX).then(|| {
        format!(
            "{place}: {name}: the {RESERVED_ENV_PREFIX} prefix is Gantry's (it sets {RUN_ID_ENV}, {ATTEMPT_ENV} and {RECOVERY_ENV} itself): rename the variable"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1123() {
        assert!(is_rfc1123_label("ml-training-job"));
        assert!(is_rfc1123_label("0abc"));
        assert!(!is_rfc1123_label("-abc"));
        assert!(!is_rfc1123_label("abc-"));
        assert!(!is_rfc1123_label("Abc"));
        assert!(!is_rfc1123_label(&"a".repeat(64)));
        assert!(!is_rfc1035_label("0abc"));
        assert!(is_rfc1123_subdomain("a.b-c.d"));
        assert!(!is_rfc1123_subdomain("a..b"));
    }

    #[test]
    fn env_and_label_values() {
        assert!(is_env_name("SIM_FAIL_ATTEMPTS"));
        assert!(!is_env_name("1X"));
        assert!(!is_env_name("A B"));
        assert!(is_label_value("ml-training"));
        assert!(!is_label_value("-x"));
    }

    #[test]
    fn quantities_as_the_api_server_reads_them() {
        for good in ["50m", "1", "1.5", "64Mi", "2G", "1e3", "0.5Gi"] {
            assert!(is_quantity(good), "{good}");
        }
        for bad in ["", "m", "lots", "64 Mi", "1.2.3", "5Xi", "1e"] {
            assert!(!is_quantity(bad), "{bad}");
        }
    }

    #[test]
    fn gantrys_own_variables_are_refused_naming_where_they_were_set() {
        let said = reserved_env("GANTRY_X", "--env").unwrap_or_default();
        assert!(
            said.starts_with("--env: GANTRY_X: the GANTRY_ prefix is Gantry's"),
            "{said}"
        );
        assert_eq!(reserved_env("EPOCHS", "--env"), None);
    }

    #[test]
    fn label_keys_as_the_api_server_takes_them() {
        for good in [
            "job",
            "team_name",
            "a.b-c",
            "example.com/team",
            "gantry.dev/attempt",
            "x",
        ] {
            assert!(is_label_key(good), "{good}");
        }
        let long = "a".repeat(64);
        for bad in [
            "",
            "team name",
            "-x",
            "x-",
            "/x",
            "example.com/",
            "Example.com/x",
            "a/b/c",
            long.as_str(),
        ] {
            assert!(!is_label_key(bad), "{bad}");
        }
    }
}
