//! `gantry watch`: the engine alone, in the foreground — for tmux, systemd or a server where no
//! one keeps a terminal open. It follows the cluster and the newest attempt, saves every pod's
//! log exactly as the TUI does (same files, same lock), and prints every notice, one line each:
//! the time, the severity and the text (also to `gantry.log`), or with `--json` one object per
//! line for scripts. SIGTERM or Ctrl-C stop it cleanly: exit 0.

use tokio::sync::broadcast::error::RecvError;

use super::stop_signals::StopSignals;
use crate::cli::WatchArgs;
use crate::engine::{Engine, Notice, open_session};
use crate::settings::Settings;

pub async fn run(args: WatchArgs, settings: Settings) -> i32 {
    let kept = settings.clone();
    let Settings {
        session: options,
        config,
        log_file,
        ..
    } = settings;
    if options.in_cluster {
        // The pod's log is where its lines are kept (the cluster's logging reads it).
        crate::logging::to_stderr();
    } else {
        crate::logging::to_file(log_file.as_deref());
    }
    let session = match open_session(&options, config).await {
        Ok(s) => s,
        Err(e) => {
            crate::errln!("gantry: {e:#}");
            return 2;
        }
    };
    let place = session.info.place.clone();
    let cluster = session.cluster_name();
    if let Some(dir) = &session.sim_dir {
        crate::errln!(
            "gantry watch: simulated cloud: state in {} (endpoints.json, token, kubeconfig)",
            dir.display()
        );
    }
    let Ok(mut stop) = StopSignals::listen() else {
        crate::errln!("gantry: cannot listen for SIGTERM and SIGINT");
        return 1;
    };
    let engine = Engine::start(session);
    let _alongside = match super::alongside::start(&kept, &engine.handle(), args.health).await {
        Ok(a) => a,
        Err(e) => {
            engine.stop().await;
            crate::errln!("gantry watch: {e}");
            return 2;
        }
    };
    let mut notices = engine.handle().notices();
    crate::errln!("gantry watch: cluster {cluster} in {place}; SIGTERM or Ctrl-C stops");
    loop {
        tokio::select! {
            _ = stop.recv() => break,
            n = notices.recv() => match n {
                Ok(n) => crate::outln!("{}", line(&n, args.json, jiff::Timestamp::now())),
                Err(RecvError::Lagged(missed)) => {
                    crate::errln!("gantry watch: {missed} changes came too fast to print (gantry.log has them)");
                }
                Err(RecvError::Closed) => break,
            },
        }
    }
    engine.stop().await;
    crate::errln!("gantry watch: stopped");
    0
}

/// One notice as `gantry watch` prints it: text, or an object for scripts.
fn line(notice: &Notice, json: bool, now: jiff::Timestamp) -> String {
    let at = now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    if !json {
        return format!("{at} {:<8} {notice}", notice.severity.name());
    }
    let mut object = serde_json::json!({
        "at": at,
        "kind": notice.kind.name(),
        "severity": notice.severity.name(),
        "subject": crate::sanitize::one_line(&notice.subject),
        "text": notice.to_string(),
    });
    if let (Some(news), Some(sent_as), Some(map)) =
        (&notice.news, notice.sent_as(), object.as_object_mut())
    {
        map.insert("event".into(), sent_as.name().into());
        map.insert("detail".into(), news.detail.clone().into());
    }
    object.to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::vocabulary::{Kind, Severity};

    #[test]
    fn a_notice_is_a_line_of_text_or_one_object_with_its_event_for_scripts() {
        let now: jiff::Timestamp = "2026-12-05T10:00:00Z".parse().unwrap();
        let notice = Notice::new(
            Kind::Stalled,
            Severity::Warning,
            "job-1",
            "attempt job-1 stalled",
        )
        .as_news("job-1/1")
        .with_detail("attempt", "job-1");
        assert_eq!(
            line(&notice, false, now),
            "2026-12-05T10:00:00Z warning  attempt job-1 stalled"
        );
        let object: serde_json::Value = serde_json::from_str(&line(&notice, true, now)).unwrap();
        assert_eq!(
            object,
            serde_json::json!({"at": "2026-12-05T10:00:00Z", "kind": "stalled",
                "severity": "warning", "subject": "job-1", "text": "attempt job-1 stalled",
                "event": "stalled", "detail": {"attempt": "job-1"}})
        );
        let plain = Notice::new(Kind::Log, Severity::Info, "p\x1b[2J", "log of p ended");
        let object: serde_json::Value = serde_json::from_str(&line(&plain, true, now)).unwrap();
        assert!(object.get("event").is_none());
        assert!(!object["subject"].as_str().unwrap().contains('\x1b'));
    }
}
