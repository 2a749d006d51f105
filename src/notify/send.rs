//! One try at one target: the request its kind wants (Slack's blocks, the webhook's schema,
//! ntfy's headers), sent with a timeout, and what came of it — delivered, worth another try
//! (no connection, a timeout, 5xx, 429, with the server's `Retry-After` when it gave one) or
//! refused for good (any other status). Every request carries `User-Agent: gantry/<version>`
//! and the event's `Idempotency-Key`, the same on every try. Nothing here shows the URL: an
//! error is described without it, and a response's text is cut short and cleared of it.

use std::fmt;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, RETRY_AFTER};

use super::message::{Message, bounded, plain};
use crate::config::{NotifyTarget, TargetKind};

/// How much of a refusal's body is kept, to say why.
const REASON_BYTES: usize = 300;

/// The outcome of one try.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A 2xx.
    Delivered { status: u16 },
    /// Worth another try: `after` is the server's `Retry-After`, when it said one.
    Retry {
        why: String,
        after: Option<Duration>,
    },
    /// Refused for good: another try would be refused the same way.
    Refused { why: String },
}

impl Outcome {
    pub fn is_delivered(&self) -> bool {
        matches!(self, Outcome::Delivered { .. })
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Delivered { status } => write!(f, "delivered (HTTP {status})"),
            Outcome::Retry { why, .. } => f.write_str(why),
            Outcome::Refused { why } => f.write_str(why),
        }
    }
}

/// The HTTP client every try shares.
#[derive(Debug, Clone)]
pub struct Sender {
    client: reqwest::Client,
}

impl Sender {
    /// A client whose every request ends within `timeout`. Redirects are not followed: a
    /// webhook that moved is an error to fix, not a reason to post the message elsewhere.
    pub fn new(timeout: Duration) -> Result<Sender, String> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("gantry/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot make an HTTP client: {}", e.without_url()))?;
        Ok(Sender { client })
    }

    /// One try of `event` at `target` (a terminal target is never sent: its viewers tell it).
    pub async fn send(&self, target: &NotifyTarget, event: &Message) -> Outcome {
        let Some(url) = target.address() else {
            return Outcome::Refused {
                why: format!("{} targets are not sent over HTTP", target.kind.name()),
            };
        };
        let (content_type, headers, body) = match target.kind {
            TargetKind::Slack => ("application/json", Vec::new(), super::slack::body(event)),
            TargetKind::Webhook => ("application/json", Vec::new(), super::webhook::body(event)),
            TargetKind::Ntfy => {
                let (headers, body) = super::ntfy::request(event);
                ("text/plain; charset=utf-8", headers, body)
            }
            TargetKind::Terminal => {
                return Outcome::Refused {
                    why: "terminal targets are told by their viewers".into(),
                };
            }
        };
        let mut request = self
            .client
            .post(url.expose().clone())
            .header(CONTENT_TYPE, content_type)
            .header("Idempotency-Key", idempotency_key(&event.key))
            .body(body);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => {
                return Outcome::Retry {
                    why: describe_error(e),
                    after: None,
                };
            }
        };
        let status = response.status();
        if status.is_success() {
            return Outcome::Delivered {
                status: status.as_u16(),
            };
        }
        let after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after(v, jiff::Timestamp::now()));
        let reason = reason(response, &url.hidden_part()).await;
        let why = format!("HTTP {}{reason}", status.as_u16());
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            Outcome::Retry { why, after }
        } else if status.is_redirection() {
            Outcome::Refused {
                why: format!("{why}: the URL redirects elsewhere; give the address it moved to"),
            }
        } else {
            Outcome::Refused { why }
        }
    }
}

/// The `Idempotency-Key` for an event's key: the key with every byte that is not printable
/// ASCII, and `%` itself, written `%XX` — so two keys never share a header, and the same key
/// always gives the same one, whichever target and process sends it.
pub fn idempotency_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        if (0x21..0x7f).contains(&b) && b != b'%' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `Retry-After` as a wait from `now`: seconds, or an HTTP date (a date past is no wait).
pub fn retry_after(value: &str, now: jiff::Timestamp) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = jiff::fmt::rfc2822::DateTimeParser::new()
        .parse_timestamp(value)
        .ok()?;
    Some(Duration::try_from(at.duration_since(now)).unwrap_or(Duration::ZERO))
}

/// Why a request failed, without its URL (a reqwest error's text holds it).
fn describe_error(e: reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    let e = e.without_url();
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        causes.push(cause.to_string());
        source = cause.source();
    }
    match causes.last() {
        Some(cause) => format!("{kind}: {}", plain(cause)),
        None => kind.to_string(),
    }
}

/// The start of a refusal's body (` (invalid_payload)`), one line, without the URL's secret
/// part; empty when there is none.
async fn reason(mut response: reqwest::Response, hidden: &str) -> String {
    let mut bytes = Vec::new();
    while bytes.len() < REASON_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            _ => break,
        }
    }
    bytes.truncate(REASON_BYTES);
    let mut text = plain(&String::from_utf8_lossy(&bytes));
    if !hidden.is_empty() {
        text = text.replace(hidden, "/…");
    }
    let text = bounded(text.trim(), 120);
    if text.is_empty() {
        String::new()
    } else {
        format!(" ({text})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idempotency_key_is_the_key_with_anything_unusual_escaped() {
        assert_eq!(idempotency_key("run-abc/budget/80"), "run-abc/budget/80");
        assert_eq!(idempotency_key("a b%c\né"), "a%20b%25c%0A%C3%A9");
        assert_ne!(idempotency_key("a b"), idempotency_key("a%20b"));
    }

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        let now: jiff::Timestamp = "2015-10-21T07:28:00Z".parse().unwrap();
        assert_eq!(retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(
            retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("soon", now), None);
    }
}
