//! The body of a Slack incoming webhook: `text`, the line a notification shows, and Block Kit
//! `blocks` for the message itself — a header (plain text, at most 150 characters), a section
//! with the text and a field for each thing known (cluster, job, attempt, cost so far, class,
//! ETA, …; at most 10, each at most 2,000 characters), and a context line with the `ssh -t …`
//! command that watches the run when there is one. Slack reads `&`, `<` and `>` as control
//! characters in every text object, so each is written as its HTML entity: text from a
//! container can neither mention `@channel` nor make a link.

use serde_json::{Value, json};

use super::message::{Message, bounded};
use crate::vocabulary::Severity;

/// Slack's limits.
const HEADER_MAX: usize = 150;
const SECTION_TEXT_MAX: usize = 3000;
const FIELDS_MAX: usize = 10;
const FIELD_MAX: usize = 2000;
/// What a field shows of a value at most: a field is a glance, not a log.
const VALUE_MAX: usize = 200;

/// The details shown as fields, in this order, and their labels; other details follow by name.
const KNOWN_DETAILS: [(&str, &str); 6] = [
    ("class", "Class"),
    ("eta", "ETA"),
    ("pod", "Pod"),
    ("metric", "Metric"),
    ("step", "Step"),
    ("cause", "Cause"),
];

/// `&`, `<` and `>` as Slack wants them in text objects.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `text` escaped and bounded to `max` characters as sent (an entity is never cut).
fn escaped_within(text: &str, max: usize) -> String {
    let mut keep = max;
    loop {
        let escaped = escape(&bounded(text, keep));
        if escaped.chars().count() <= max || keep == 0 {
            return escaped;
        }
        keep -= 1;
    }
}

fn marker(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "🔴",
        Severity::Warning => "🟠",
        Severity::Info => "🔵",
    }
}

/// The body for `event`, as JSON.
pub fn body(event: &Message) -> Vec<u8> {
    serde_json::to_vec(&message(event)).unwrap_or_default()
}

fn message(event: &Message) -> Value {
    let text = event.plain_text();
    let heading = format!(
        "{} {}: {}",
        marker(event.severity),
        event.kind.title(),
        event.subject()
    );
    let mut blocks = vec![
        json!({
            "type": "header",
            "text": {"type": "plain_text", "text": escaped_within(&heading, HEADER_MAX), "emoji": true},
        }),
        json!({
            "type": "section",
            "text": {"type": "mrkdwn", "text": escaped_within(&text, SECTION_TEXT_MAX)},
            "fields": fields(event),
        }),
    ];
    let mut context = Vec::new();
    if let Some(watch) = &event.watch {
        // In code, so that nothing in it formats; a backtick would end the code early.
        let watch = super::message::plain(watch).replace('`', "'");
        context.push(json!({
            "type": "mrkdwn",
            "text": format!("Watch it: `{}`", escaped_within(&watch, FIELD_MAX - 20)),
        }));
    }
    context.push(json!({
        "type": "mrkdwn",
        "text": format!("{} · {} · gantry", event.severity.name(), event.at.strftime("%Y-%m-%d %H:%M:%S UTC")),
    }));
    blocks.push(json!({"type": "context", "elements": context}));
    json!({
        "text": escaped_within(&format!("{} {}: {}: {text}", marker(event.severity), event.kind.title(), event.subject()), SECTION_TEXT_MAX),
        "blocks": blocks,
    })
}

/// `*Label*\nvalue` fields for what is known, at most Slack's ten.
fn fields(event: &Message) -> Vec<Value> {
    let mut pairs: Vec<(String, String)> = vec![("Cluster".into(), event.cluster.clone())];
    if let Some(job) = &event.job {
        pairs.push(("Job".into(), job.clone()));
    }
    if let Some(n) = event.attempt {
        pairs.push(("Attempt".into(), format!("#{n}")));
    }
    if let Some(cost) = event.cost_so_far.filter(|c| c.is_finite()) {
        pairs.push(("Cost so far".into(), format!("${cost:.2}")));
    }
    for (name, label) in KNOWN_DETAILS {
        if let Some(value) = event.detail_text(name) {
            pairs.push((label.into(), value));
        }
    }
    for name in event.detail.keys() {
        if KNOWN_DETAILS.iter().any(|(known, _)| known == name) {
            continue;
        }
        if let Some(value) = event.detail_text(name) {
            pairs.push((name.clone(), value));
        }
    }
    if let Some(run) = &event.run {
        pairs.push(("Run".into(), run.clone()));
    }
    pairs
        .into_iter()
        .take(FIELDS_MAX)
        .map(|(label, value)| {
            let label = escaped_within(&super::message::plain(&label), 50);
            let value = escaped_within(&super::message::plain(&value), VALUE_MAX);
            let text = format!("*{label}*\n{value}");
            json!({"type": "mrkdwn", "text": bounded(&text, FIELD_MAX)})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::Kind;

    fn event() -> Message {
        let mut e = Message::new(
            Kind::AttemptEnded,
            Severity::Critical,
            "ml-gke-cluster",
            "attempt #3 failed: <!channel> OOM & more",
            "run-abc/attempt-ended/3",
        );
        e.job = Some("ml-training-job".into());
        e.run = Some("run-abc".into());
        e.attempt = Some(3);
        e.cost_so_far = Some(12.5);
        e.detail.insert("class".into(), "oom".into());
        e.detail.insert("eta".into(), "2h 10m".into());
        e.at = "2025-01-31T12:00:00Z".parse().unwrap();
        e.watch = Some("ssh -t -p 2222 gpu-box".into());
        e
    }

    #[test]
    fn the_message_is_a_header_a_section_with_fields_and_the_watch_line() {
        let m = message(&event());
        assert_eq!(
            m["text"],
            "🔴 Attempt ended: ml-training-job #3 on ml-gke-cluster: attempt #3 failed: &lt;!channel&gt; OOM &amp; more"
        );
        let blocks = m["blocks"].as_array().unwrap();
        assert_eq!(blocks.len(), 3);
        assert_eq!(
            blocks[0],
            json!({"type": "header", "text": {"type": "plain_text", "text": "🔴 Attempt ended: ml-training-job #3 on ml-gke-cluster", "emoji": true}})
        );
        assert_eq!(blocks[1]["type"], "section");
        assert_eq!(
            blocks[1]["text"],
            json!({"type": "mrkdwn", "text": "attempt #3 failed: &lt;!channel&gt; OOM &amp; more"})
        );
        let fields: Vec<&str> = blocks[1]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                assert_eq!(f["type"], "mrkdwn");
                f["text"].as_str().unwrap()
            })
            .collect();
        assert_eq!(
            fields,
            [
                "*Cluster*\nml-gke-cluster",
                "*Job*\nml-training-job",
                "*Attempt*\n#3",
                "*Cost so far*\n$12.50",
                "*Class*\noom",
                "*ETA*\n2h 10m",
                "*Run*\nrun-abc",
            ]
        );
        assert_eq!(blocks[2]["type"], "context");
        assert_eq!(
            blocks[2]["elements"][0],
            json!({"type": "mrkdwn", "text": "Watch it: `ssh -t -p 2222 gpu-box`"})
        );
        assert_eq!(
            blocks[2]["elements"][1]["text"],
            "critical · 2025-01-31 12:00:00 UTC · gantry"
        );
    }

    #[test]
    fn slacks_limits_hold_whatever_the_text() {
        let mut e = event();
        e.job = Some("j&".repeat(200));
        e.text = "<&>".repeat(5000);
        for i in 0..20 {
            e.detail.insert(format!("d{i}"), "x".repeat(5000).into());
        }
        e.watch = Some("ssh `rm -rf` &".into());
        let m = message(&e);
        let header = m["blocks"][0]["text"]["text"].as_str().unwrap();
        assert!(header.chars().count() <= HEADER_MAX, "{header}");
        let entities = header.matches("&amp;").count() + header.matches("&lt;").count();
        assert_eq!(
            header.matches('&').count(),
            entities,
            "no entity is cut: {header}"
        );
        let section = &m["blocks"][1];
        assert!(section["text"]["text"].as_str().unwrap().chars().count() <= SECTION_TEXT_MAX);
        let fields = section["fields"].as_array().unwrap();
        assert_eq!(fields.len(), FIELDS_MAX);
        assert!(
            fields
                .iter()
                .all(|f| f["text"].as_str().unwrap().chars().count() <= FIELD_MAX)
        );
        let watch = m["blocks"][2]["elements"][0]["text"].as_str().unwrap();
        assert_eq!(watch, "Watch it: `ssh 'rm -rf' &amp;`");
    }

    #[test]
    fn without_a_watch_line_the_context_has_the_time_alone() {
        let mut e = event();
        e.watch = None;
        let m = message(&e);
        assert_eq!(m["blocks"][2]["elements"].as_array().unwrap().len(), 1);
    }
}
