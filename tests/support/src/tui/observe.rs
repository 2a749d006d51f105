//! What the viewer tests look at: the lines held and shown, the pods listed, the dialog and the
//! notice, a refusal and why; and the log commands a viewer is expected to ask for.

use crossterm::event::KeyEvent;
use gantry::app::{App, Overlay};
use gantry::engine::Command;
use gantry::engine::world::FollowLogs;
use gantry::vocabulary::Severity;

use super::Tui;

/// The viewer's own fetch of an attempt's logs (not the newest attempt's, or a previous
/// container's).
pub fn fetch(attempt: &str, pod: Option<&str>, previous: bool, generation: u64) -> Command {
    Command::FetchLogs {
        attempt: attempt.into(),
        pod: pod.map(Into::into),
        previous,
        generation,
    }
}

/// What the engine follows into its store when an attempt is the newest.
pub fn store_follows(attempt: &str, generation: u64) -> FollowLogs {
    FollowLogs {
        attempt: attempt.into(),
        generation,
    }
}

pub fn texts(app: &Tui) -> Vec<String> {
    app.model
        .logs
        .lines
        .iter()
        .map(|e| e.text.to_string())
        .collect()
}

/// The text of the line at the bottom of the logs view.
pub fn bottom_line(app: &Tui) -> String {
    app.bottom_text().unwrap()
}

pub fn pod_names(app: &Tui) -> Vec<String> {
    app.model
        .jobs
        .pods
        .values()
        .map(|p| p.name.clone())
        .collect()
}

pub fn is_confirm(app: &Tui) -> bool {
    matches!(app.overlay, Some(Overlay::Confirm(_)))
}

pub fn refused(app: &mut Tui, k: KeyEvent) -> String {
    let before = app.overlay.clone();
    let commands = app.on_key(k);
    assert!(commands.is_empty(), "{k:?} asked for {commands:?}");
    assert_eq!(app.overlay, before, "{k:?} opened a dialog");
    let n = app.notice.clone().expect("a refusal says why");
    assert_eq!(n.severity, Severity::Warning, "{n:?}");
    n.text
}

pub fn notice(app: &App) -> String {
    app.notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default()
}
