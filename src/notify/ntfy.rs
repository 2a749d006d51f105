//! A message to an ntfy topic (ntfy.sh or a server of one's own), as ntfy's publish API takes
//! it: the text as the body of a POST to the topic's URL, and `Title`, `Priority` (3, 4 or 5
//! for info, warning and critical), `Tags` (a severity emoji's short code, then the event's
//! name) and `Click` (when the event has a link) as headers. A header that is not ASCII is
//! written as an RFC 2047 encoded word, which ntfy decodes.

use base64::Engine;

use super::message::{Message, bounded, plain};
use crate::vocabulary::Severity;

/// ntfy turns a longer body into an attachment.
const BODY_MAX_BYTES: usize = 4000;
const TITLE_MAX: usize = 200;

/// The request's headers and body.
pub fn request(event: &Message) -> (Vec<(&'static str, String)>, Vec<u8>) {
    let mut headers = vec![
        (
            "Title",
            header_text(&bounded(
                &format!("{}: {}", event.kind.title(), event.subject()),
                TITLE_MAX,
            )),
        ),
        ("Priority", priority(event.severity).to_string()),
        (
            "Tags",
            format!("{},{}", severity_tag(event.severity), event.kind.name()),
        ),
    ];
    if let Some(link) = event.link.as_deref().filter(|l| is_http_url(l)) {
        headers.push(("Click", link.to_string()));
    }
    (headers, body(event).into_bytes())
}

/// ntfy's priorities: 3 default, 4 high, 5 max.
fn priority(severity: Severity) -> u8 {
    match severity {
        Severity::Info => 3,
        Severity::Warning => 4,
        Severity::Critical => 5,
    }
}

/// An emoji short code ntfy shows before the title.
fn severity_tag(severity: Severity) -> &'static str {
    match severity {
        Severity::Info => "information_source",
        Severity::Warning => "warning",
        Severity::Critical => "rotating_light",
    }
}

fn body(event: &Message) -> String {
    let mut body = event.plain_text();
    if let Some(cost) = event.cost_so_far.filter(|c| c.is_finite()) {
        body.push_str(&format!("\nCost so far: ${cost:.2}"));
    }
    if let Some(watch) = &event.watch {
        body.push_str(&format!("\nWatch it: {}", plain(watch)));
    }
    let mut end = body.len().min(BODY_MAX_BYTES);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    body.truncate(end);
    body
}

/// Printable ASCII as it is; anything else as one RFC 2047 encoded word (UTF-8, base64).
fn header_text(text: &str) -> String {
    let text = plain(text);
    if text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        text
    } else {
        format!(
            "=?UTF-8?B?{}?=",
            base64::engine::general_purpose::STANDARD.encode(text.as_bytes())
        )
    }
}

/// A link that can go in a header as it is: an http(s) URL of printable ASCII.
fn is_http_url(link: &str) -> bool {
    (link.starts_with("https://") || link.starts_with("http://"))
        && link.bytes().all(|b| (0x21..0x7f).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::Kind;

    fn header<'a>(headers: &'a [(&str, String)], name: &str) -> Option<&'a str> {
        headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn the_text_is_the_body_and_title_priority_tags_and_click_are_headers() {
        let mut e = Message::new(
            Kind::Alert,
            Severity::Critical,
            "ml-gke-cluster",
            "loss is NaN at step 1200",
            "run-abc/alert/loss",
        );
        e.job = Some("ml-training-job".into());
        e.attempt = Some(2);
        e.watch = Some("ssh -t -p 2222 gpu-box".into());
        e.link = Some("https://console.cloud.google.com/kubernetes".into());
        let (headers, body) = request(&e);
        assert_eq!(
            header(&headers, "Title"),
            Some("Training alert: ml-training-job #2 on ml-gke-cluster")
        );
        assert_eq!(header(&headers, "Priority"), Some("5"));
        assert_eq!(header(&headers, "Tags"), Some("rotating_light,alert"));
        assert_eq!(
            header(&headers, "Click"),
            Some("https://console.cloud.google.com/kubernetes")
        );
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "loss is NaN at step 1200\nWatch it: ssh -t -p 2222 gpu-box"
        );
    }

    #[test]
    fn severities_map_to_ntfys_priorities_and_emoji() {
        for (severity, priority, tag) in [
            (Severity::Info, "3", "information_source,idle"),
            (Severity::Warning, "4", "warning,idle"),
            (Severity::Critical, "5", "rotating_light,idle"),
        ] {
            let (headers, _) = request(&Message::new(Kind::Idle, severity, "c", "t", "k"));
            assert_eq!(header(&headers, "Priority"), Some(priority));
            assert_eq!(header(&headers, "Tags"), Some(tag));
            assert_eq!(header(&headers, "Click"), None, "no link, no click");
        }
    }

    #[test]
    fn a_title_that_is_not_ascii_is_an_encoded_word_and_the_body_is_bounded() {
        let mut e = Message::new(
            Kind::Budget,
            Severity::Warning,
            "clüster",
            "€".repeat(3000),
            "k",
        );
        e.link = Some("javascript:alert(1)".into());
        let (headers, body) = request(&e);
        let title = header(&headers, "Title").unwrap();
        let encoded = title
            .strip_prefix("=?UTF-8?B?")
            .unwrap()
            .strip_suffix("?=")
            .unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        assert_eq!(String::from_utf8(decoded).unwrap(), "Budget: clüster");
        assert!(body.len() <= BODY_MAX_BYTES);
        assert!(
            String::from_utf8(body).is_ok(),
            "cut at a character's boundary"
        );
        assert_eq!(
            header(&headers, "Click"),
            None,
            "only an http(s) link is a click"
        );
    }
}
