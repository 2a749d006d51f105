//! `gantry notify test|status` through the real binary, against a receiver on loopback: what
//! each prints, its exit code, and that neither shows the URL's secret path.

use std::path::Path;
use std::process::Output;

use gantry_test_support as common;

use super::notify_receiver::{Receiver, Reply, SECRET_PATH};

/// Runs `gantry --config <config> notify <what>` with a home of its own (its state directory
/// holds the outbox), while the test's receivers go on answering.
async fn gantry_notify(home: &Path, config: &Path, what: &str) -> Output {
    let (home, config, what) = (home.to_path_buf(), config.to_path_buf(), what.to_string());
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(common::gantry_bin())
            .arg("--config")
            .arg(&config)
            .args(["notify", &what])
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"))
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test]
async fn notify_test_tells_each_target_and_status_shows_how_it_went() {
    let mut receiver = Receiver::start(vec![]).await;
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("hook-url"), receiver.url()).unwrap();
    let config = home.path().join("gantry.toml");
    std::fs::write(
        &config,
        "[[notify]]\nkind = \"webhook\"\nurl-file = \"hook-url\"\nevents = [\"alert\"]\n\n[[notify]]\nkind = \"terminal\"\n",
    )
    .unwrap();

    let out = gantry_notify(home.path(), &config, "test").await;
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    let got = receiver.next().await;
    assert_eq!(got.path, SECRET_PATH);
    assert_eq!(got.json()["event"], "cluster", "a test passes any filter");
    assert_eq!(
        got.json()["text"].as_str().unwrap().split(':').next(),
        Some("Gantry test message")
    );
    let host = format!("webhook http://{}/…", receiver.addr);
    assert!(
        printed.contains(&format!("[[notify]] #1  {host}  delivered (HTTP 200) in ")),
        "{printed}"
    );
    assert!(printed.contains("[[notify]] #2  terminal"), "{printed}");

    let out = gantry_notify(home.path(), &config, "status").await;
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    assert!(printed.contains(&host), "{printed}");
    assert!(
        printed.contains("test message: delivered (HTTP 200)"),
        "{printed}"
    );
    assert!(!printed.contains("SECRET"), "{printed}");
}

#[tokio::test]
async fn notify_test_exits_1_when_a_target_refuses_and_2_without_targets() {
    let receiver = Receiver::start(vec![Reply {
        status: 404,
        headers: Vec::new(),
        body: "no_service".into(),
    }])
    .await;
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("gantry.toml");
    std::fs::write(
        &config,
        format!(
            "[[notify]]\nkind = \"slack\"\nurl = \"{}\"\n",
            receiver.url()
        ),
    )
    .unwrap();
    let out = gantry_notify(home.path(), &config, "test").await;
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(1), "{printed}");
    assert!(printed.contains("HTTP 404 (no_service)"), "{printed}");
    assert!(!printed.contains("SECRET"), "{printed}");

    std::fs::write(&config, "").unwrap();
    let out = gantry_notify(home.path(), &config, "test").await;
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(2), "{printed}");
    assert!(
        printed.contains("no [[notify]] targets") && printed.contains("kind = \"ntfy\""),
        "{printed}"
    );

    std::fs::write(
        &config,
        "[[notify]]\nkind = \"slack\"\nurl-file = \"missing\"\n",
    )
    .unwrap();
    let out = gantry_notify(home.path(), &config, "status").await;
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(2), "{printed}");
    assert!(
        printed.contains("url-file = \"missing\": cannot read"),
        "{printed}"
    );
}
