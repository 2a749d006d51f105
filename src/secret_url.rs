//! A notification target's URL is a secret: whoever has a Slack incoming-webhook URL or an ntfy
//! topic can post to it. [`SecretUrl`] holds one so that it cannot leak by accident: its
//! `Debug`, `Display` and `Serialize` show the scheme and host only
//! (`https://hooks.slack.com/…`), never the user, path or query. The whole URL comes out
//! through [`SecretUrl::expose`] alone, which only the request that sends to it calls.

use std::fmt;

use reqwest::Url;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What stands for the hidden part of a URL where it is shown.
const HIDDEN: &str = "…";

#[derive(Clone, PartialEq, Eq)]
pub struct SecretUrl(Url);

impl SecretUrl {
    /// An http(s) URL with a host; the error says what to write and never repeats the text
    /// (it may be the secret itself, mistyped).
    pub fn parse(text: &str) -> Result<SecretUrl, String> {
        let text = text.trim();
        let url = Url::parse(text).map_err(|e| {
            format!("not a URL ({e}): write the whole address, starting with https://")
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "{}: is not a web address: write an http:// or https:// one",
                url.scheme()
            ));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err("a URL without a host: write https://HOST/…".into());
        }
        if url.path().ends_with(HIDDEN) || url.path().ends_with("%E2%80%A6") {
            return Err(format!(
                "{}: that is the redacted form `gantry config` prints, not the URL: write the whole URL, or keep it in a file and give url-file",
                redacted(&url)
            ));
        }
        Ok(SecretUrl(url))
    }

    /// The whole URL, for the request that sends to it and nothing else.
    pub fn expose(&self) -> &Url {
        &self.0
    }

    /// What may be shown: `https://hooks.slack.com/…`.
    pub fn redacted(&self) -> String {
        redacted(&self.0)
    }

    /// The host (with its port when it is not the scheme's own).
    pub fn host(&self) -> String {
        host(&self.0)
    }

    /// The part that must not be shown (path and query), to check that some text does not hold
    /// it; empty when the URL has none worth hiding.
    pub fn hidden_part(&self) -> String {
        let mut hidden = self.0.path().to_string();
        if let Some(query) = self.0.query() {
            hidden.push('?');
            hidden.push_str(query);
        }
        if hidden == "/" { String::new() } else { hidden }
    }
}

fn host(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

fn redacted(url: &Url) -> String {
    format!("{}://{}/{HIDDEN}", url.scheme(), host(url))
}

impl fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretUrl({})", self.redacted())
    }
}

impl fmt::Display for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl Serialize for SecretUrl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.redacted())
    }
}

impl<'de> Deserialize<'de> for SecretUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        SecretUrl::parse(&text).map_err(|e| serde::de::Error::custom(format!("url: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLACK: &str = "https://hooks.slack.com/services/T000/B000/XXXXsecretXXXX";

    #[test]
    fn a_secret_url_shows_its_host_only_however_it_is_printed() {
        let url = SecretUrl::parse(SLACK).unwrap();
        for shown in [
            format!("{url}"),
            format!("{url:?}"),
            format!("{url:#?}"),
            serde_json::to_string(&url).unwrap(),
            toml::to_string(&std::collections::BTreeMap::from([("url", &url)])).unwrap(),
        ] {
            assert!(!shown.contains("secret"), "{shown}");
            assert!(!shown.contains("services"), "{shown}");
            assert!(shown.contains("https://hooks.slack.com/…"), "{shown}");
        }
        assert_eq!(url.expose().as_str(), SLACK);
        assert_eq!(url.hidden_part(), "/services/T000/B000/XXXXsecretXXXX");
    }

    #[test]
    fn credentials_and_queries_are_hidden_and_a_port_is_shown() {
        let url =
            SecretUrl::parse("http://phil:pass@ntfy.example.com:8080/alerts?auth=tk").unwrap();
        assert_eq!(url.redacted(), "http://ntfy.example.com:8080/…");
        assert!(!format!("{url:?}").contains("pass"));
        assert_eq!(url.host(), "ntfy.example.com:8080");
    }

    #[test]
    fn only_http_urls_with_a_host_are_taken_and_the_error_never_repeats_the_text() {
        for bad in [
            "hooks.slack.com/services/T000/secret",
            "ftp://example.com/secret",
            "mailto:secret@example.com",
            "https://",
        ] {
            let e = SecretUrl::parse(bad).unwrap_err();
            assert!(!e.contains("secret"), "{bad}: {e}");
            assert!(e.contains("http"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_redacted_form_is_refused_so_a_printed_config_cannot_post_to_the_wrong_place() {
        let e = SecretUrl::parse("https://hooks.slack.com/…").unwrap_err();
        assert!(e.contains("redacted") && e.contains("url-file"), "{e}");
    }
}
