//! Fault drills: an Indexed Job of 4 workers logging 20,000 lines each, followed at once by the
//! engine (its workers on the simulated GKE and cluster, as the TUI runs them, with one viewer
//! pressing the keys) and by the real `gantry logs --follow`, while one of the simulated cloud's
//! faults fires.
//!
//! Each drill checks that the model's picture of the Job and its pods converges to what a plain
//! list says; that every line each pod wrote is saved exactly once (the saved files equal a plain
//! GET of each pod's log, byte for byte, for the engine and for the CLI) and held exactly once
//! (the store's line count, the CLI's stdout); that nothing panicked; and that a trouble showed
//! while a fault the client can see was on, and none is left after.
//!
//! The fault window is defined by progress, not by time: it opens once every pod has delivered
//! some lines to the model and closes once every pod is past a third of its log and the notice
//! has been seen. Waits are on events; the only clock is a hang guard.
//!
//! Here: the drills, what each one's fault is, and the Job they run. The drill itself (`run`)
//! follows the Job through the fault window and checks what was saved, held and shown, against
//! what the simulator says through a plain client (`truth`), for the engine and for the real
//! CLI's follow beside it (`cli`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli;
mod run;
mod truth;

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gantry::config::JobConfig;
use gantry::sim::faults::Fault;

use run::run;

const WORKERS: u32 = 4;
const LINES: u64 = 20_000;
/// Lines per simulated second; at time scale 0.01 a pod writes its log in about 5 s of wall time.
const PACE: &str = "40";
/// Only against a hung drill: nothing is asserted about time.
const HANG_GUARD: Duration = gantry_test_support::WAIT_BOUND;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Drill {
    WatchDrop,
    WatchGone,
    LogCut,
    Restart,
    Http429,
    Http503,
    TokenExpiry,
    Slow,
    PodReplaced,
}

impl Drill {
    fn fault(self) -> Option<Fault> {
        Some(match self {
            Drill::WatchDrop => Fault::WatchDrop(Duration::from_millis(300)),
            Drill::WatchGone => Fault::WatchGone,
            Drill::LogCut => Fault::LogCut(Duration::from_millis(300)),
            Drill::Restart => Fault::Restart(Duration::from_millis(700)),
            Drill::Http429 => Fault::Http429(30),
            Drill::Http503 => Fault::Http503(30),
            Drill::TokenExpiry => Fault::TokenExpiry(Duration::from_millis(400)),
            Drill::Slow => Fault::Slow(Duration::from_millis(150)),
            Drill::PodReplaced => return None,
        })
    }

    /// The status a request may get under the fault.
    fn refusal(self) -> Option<u16> {
        match self {
            Drill::Http429 => Some(429),
            Drill::Http503 => Some(503),
            _ => None,
        }
    }

    /// Whether the client can see the fault (a request or a stream fails), so the operator
    /// should be told. Not seen: kube's watcher takes a watch cut at a chunk boundary for its
    /// end and quietly watches again from where it was; kube's client retries 429 and 503 (up
    /// to 15 times, honouring Retry-After) before Gantry hears of them; slow answers still
    /// answer; a token refreshed after a 401 and retried is invisible by design; a deleted pod
    /// is news, not trouble.
    fn visible(self) -> bool {
        matches!(self, Drill::WatchGone | Drill::LogCut | Drill::Restart)
    }
}

fn job_config() -> JobConfig {
    let mut cfg = JobConfig::default();
    cfg.env.insert("SIM_LOG_LINES".into(), LINES.to_string());
    cfg.env.insert("SIM_LINES_PER_SECOND".into(), PACE.into());
    cfg.parallelism = Some(WORKERS);
    cfg.completions = Some(WORKERS);
    cfg.indexed = true;
    cfg.backoff_limit = 2;
    cfg
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

/// What one drill found, for the report.
#[derive(Debug)]
struct Found {
    drill: Drill,
    lines_checked: usize,
    trouble_seen: Vec<String>,
}

fn report(found: &Found) {
    eprintln!(
        "drill {:?}: {} lines checked, troubles shown: {:?}",
        found.drill, found.lines_checked, found.trouble_seen
    );
}

macro_rules! drill {
    ($name:ident, $drill:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            report(&run($drill).await);
        }
    };
}

drill!(watch_drop, Drill::WatchDrop);
drill!(watch_gone, Drill::WatchGone);
drill!(log_cut, Drill::LogCut);
drill!(api_server_restart, Drill::Restart);
drill!(http_429, Drill::Http429);
drill!(http_503, Drill::Http503);
drill!(token_expiry, Drill::TokenExpiry);
drill!(slow_answers, Drill::Slow);
drill!(pod_replaced_mid_follow, Drill::PodReplaced);
