//! `gantry notify test|status`: check the `[[notify]]` targets. `test` sends each one a test
//! message now (past its filters and rate limit) and says how each took it — exit 1 when any
//! did not; `status` lists them with their waiting messages and last delivery, from the outbox
//! the Gantry processes of this machine share. URLs are shown by their host alone.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::{NotifyArgs, NotifyWhat};
use crate::config::TargetKind;
use crate::notify::{self, TargetStatus, TestResult};
use crate::settings::Settings;

use super::connect::{cluster_label, fail};

/// How long a test request may take.
const TEST_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn run(args: NotifyArgs, settings: &Settings) -> i32 {
    crate::logging::to_stderr();
    let targets = &settings.config.notify;
    if targets.is_empty() {
        return fail(&no_targets(settings), 2);
    }
    let Some(dir) = crate::paths::state_dir().map(|d| d.join(notify::OUTBOX_DIR)) else {
        return fail(
            &"cannot find the state directory for the outbox: set HOME or XDG_STATE_HOME",
            2,
        );
    };
    match args.what {
        NotifyWhat::Test => {
            let event = notify::test_event(&cluster_label(settings.target(), &settings.config));
            let results = match notify::send_test(targets, &event, TEST_TIMEOUT, Some(&dir)).await {
                Ok(results) => results,
                Err(e) => return fail(&e, 1),
            };
            let rang = std::io::stdout().is_terminal();
            if rang && results.iter().any(|r| r.outcome.is_none()) {
                // The terminal target, told here as a viewer tells it.
                crate::output::write_stdout_as_is(&notify::terminal_bytes(&event));
            }
            crate::output::write_stdout(render_test(&results, rang).as_bytes());
            if results
                .iter()
                .any(|r| r.outcome.as_ref().is_some_and(|o| !o.is_delivered()))
            {
                1
            } else {
                0
            }
        }
        NotifyWhat::Status => match notify::status(targets, &dir) {
            Ok(status) => {
                crate::output::write_stdout(
                    render_status(&status, jiff::Timestamp::now()).as_bytes(),
                );
                0
            }
            Err(e) => fail(
                &format!("cannot read the outbox in {}: {e}", dir.display()),
                1,
            ),
        },
    }
}

fn no_targets(settings: &Settings) -> String {
    let path = settings
        .target()
        .config
        .clone()
        .or_else(crate::config::Config::default_path)
        .unwrap_or_else(|| PathBuf::from("config.toml"));
    format!(
        "no [[notify]] targets in {}: add one, for example\n\n[[notify]]\nkind = \"ntfy\"\nurl = \"https://ntfy.sh/<a topic name nobody guesses>\"\n",
        path.display()
    )
}

/// One line per target: `[[notify]] #1  slack https://hooks.slack.com/…  delivered (HTTP 200)
/// in 0.42s`. `rang`: the terminal target was told on this terminal.
pub fn render_test(results: &[TestResult], rang: bool) -> String {
    let width = results
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for r in results {
        let result = match &r.outcome {
            Some(outcome) => format!("{outcome} in {:.2}s", r.took.as_secs_f64()),
            None if rang => {
                "rang this terminal (the TUI and `gantry serve`'s viewers ring theirs)".into()
            }
            None => {
                "nothing sent: the TUI and `gantry serve`'s viewers ring their terminals".into()
            }
        };
        out.push_str(&format!(
            "[[notify]] #{}  {:width$}  {result}\n",
            r.number, r.label
        ));
    }
    out
}

/// Each target, its waiting messages, its counts and its last delivery.
pub fn render_status(targets: &[TargetStatus], now: jiff::Timestamp) -> String {
    let mut out = String::new();
    for t in targets {
        out.push_str(&format!("[[notify]] #{}  {}\n", t.number, t.label));
        if t.kind == TargetKind::Terminal {
            out.push_str("  told by the TUI and `gantry serve`'s viewers, on their terminals\n");
            continue;
        }
        out.push_str(&format!(
            "  waiting {}, delivered {}, failed {}, rate-limited {}, dropped {}\n",
            t.pending, t.delivered, t.failed, t.rate_limited, t.dropped
        ));
        match &t.last {
            Some(last) => out.push_str(&format!(
                "  last: {} ({} ago): {}\n",
                last.at.strftime("%Y-%m-%d %H:%M:%S UTC"),
                ago(last.at, now),
                last.result
            )),
            None => out.push_str("  last: never tried\n"),
        }
    }
    out
}

fn ago(then: jiff::Timestamp, now: jiff::Timestamp) -> String {
    let d = Duration::try_from(now.duration_since(then)).unwrap_or(Duration::ZERO);
    let d = jiff::SignedDuration::from_secs(i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    format!("{d:#}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::{LastTry, Outcome};

    #[test]
    fn the_test_says_how_each_target_took_it_and_how_long() {
        let results = [
            TestResult {
                number: 1,
                label: "slack https://hooks.slack.com/…".into(),
                outcome: Some(Outcome::Delivered { status: 200 }),
                took: Duration::from_millis(420),
            },
            TestResult {
                number: 2,
                label: "webhook https://example.com/…".into(),
                outcome: Some(Outcome::Refused {
                    why: "HTTP 404 (no_service)".into(),
                }),
                took: Duration::from_millis(100),
            },
            TestResult {
                number: 3,
                label: "terminal".into(),
                outcome: None,
                took: Duration::ZERO,
            },
        ];
        assert_eq!(
            render_test(&results, false),
            "[[notify]] #1  slack https://hooks.slack.com/…  delivered (HTTP 200) in 0.42s\n\
             [[notify]] #2  webhook https://example.com/…    HTTP 404 (no_service) in 0.10s\n\
             [[notify]] #3  terminal                         nothing sent: the TUI and `gantry serve`'s viewers ring their terminals\n"
        );
    }

    #[test]
    fn the_status_shows_waiting_counts_and_the_last_delivery() {
        let now: jiff::Timestamp = "2025-01-31T12:05:00Z".parse().unwrap();
        let status = [
            TargetStatus {
                number: 1,
                kind: TargetKind::Ntfy,
                label: "ntfy https://ntfy.sh/…".into(),
                pending: 2,
                last: Some(LastTry {
                    at: "2025-01-31T12:00:00Z".parse().unwrap(),
                    ok: false,
                    result: "HTTP 503; try 3, next in 20s".into(),
                }),
                delivered: 7,
                failed: 1,
                rate_limited: 40,
                dropped: 0,
            },
            TargetStatus {
                number: 2,
                kind: TargetKind::Webhook,
                label: "webhook https://example.com/…".into(),
                pending: 0,
                last: None,
                delivered: 0,
                failed: 0,
                rate_limited: 0,
                dropped: 0,
            },
            TargetStatus {
                number: 3,
                kind: TargetKind::Terminal,
                label: "terminal".into(),
                pending: 0,
                last: None,
                delivered: 0,
                failed: 0,
                rate_limited: 0,
                dropped: 0,
            },
        ];
        assert_eq!(
            render_status(&status, now),
            "[[notify]] #1  ntfy https://ntfy.sh/…\n  \
             waiting 2, delivered 7, failed 1, rate-limited 40, dropped 0\n  \
             last: 2025-01-31 12:00:00 UTC (5m ago): HTTP 503; try 3, next in 20s\n\
             [[notify]] #2  webhook https://example.com/…\n  \
             waiting 0, delivered 0, failed 0, rate-limited 0, dropped 0\n  \
             last: never tried\n\
             [[notify]] #3  terminal\n  \
             told by the TUI and `gantry serve`'s viewers, on their terminals\n"
        );
    }
}
