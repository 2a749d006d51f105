use std::time::Duration;

use super::super::Config;
use super::*;

const SECRET: &str = "/services/T000/B000/XXXXsecretXXXX";

fn refused(text: &str) -> String {
    Config::parse(text).err().unwrap_or_default()
}

#[test]
fn a_target_takes_its_defaults_all_events_from_info_ten_minutes_apart() {
    let c = Config::parse(&format!(
        "[[notify]]\nkind = \"slack\"\nurl = \"https://hooks.slack.com{SECRET}\"\n"
    ))
    .unwrap();
    let t = &c.notify[0];
    assert_eq!(t.kind, TargetKind::Slack);
    assert_eq!(t.events, crate::vocabulary::Kind::SENT.to_vec());
    assert_eq!(t.min_severity, Severity::Info);
    assert_eq!(crate::notify::filter::window(t), Duration::from_secs(600));
    assert_eq!(
        t.address().unwrap().expose().as_str(),
        format!("https://hooks.slack.com{SECRET}")
    );
    assert_eq!(t.label(), "slack https://hooks.slack.com/…");
}

#[test]
fn events_severity_and_rate_limit_are_read() {
    let c = Config::parse(
        "[[notify]]\nkind = \"ntfy\"\nurl = \"https://ntfy.sh/t\"\nevents = [\"alert\", \"budget\"]\nmin-severity = \"warning\"\nrate-limit = \"1h\"\n\n[[notify]]\nkind = \"terminal\"\n",
    )
    .unwrap();
    assert_eq!(
        c.notify[0].events,
        vec![
            crate::vocabulary::Kind::Alert,
            crate::vocabulary::Kind::Budget
        ]
    );
    assert_eq!(c.notify[0].min_severity, Severity::Warning);
    assert_eq!(
        crate::notify::filter::window(&c.notify[0]),
        Duration::from_secs(3600)
    );
    assert_eq!(c.notify[1].kind, TargetKind::Terminal);
    assert!(c.notify[1].address().is_none());
}

#[test]
fn each_mistake_is_refused_naming_the_key_and_what_to_write() {
    for (text, says) in [
        ("[[notify]]\nkind = \"slack\"\n", "give the address: url = "),
        (
            "[[notify]]\nkind = \"webhook\"\nurl = \"https://e.com/x\"\nurl-file = \"/f\"\n",
            "url and url-file are both given",
        ),
        (
            "[[notify]]\nkind = \"terminal\"\nurl = \"https://e.com/x\"\n",
            "a terminal target has no url",
        ),
        (
            "[[notify]]\nkind = \"email\"\n",
            "unknown variant `email`, expected one of `slack`, `webhook`, `ntfy`, `terminal`",
        ),
        (
            "[[notify]]\nkind = \"terminal\"\nevents = [\"attempt-end\"]\n",
            "unknown event \"attempt-end\": write one of attempt-ended, recovered, alert, stalled, waiting, idle, budget, cluster",
        ),
        (
            "[[notify]]\nkind = \"terminal\"\nevents = []\n",
            "list the events it is told (attempt-ended, recovered",
        ),
        (
            "[[notify]]\nkind = \"terminal\"\nmin-severity = \"high\"\n",
            "write \"info\", \"warning\" or \"critical\"",
        ),
        (
            "[[notify]]\nkind = \"terminal\"\nrate-limit = \"often\"\n",
            "rate-limit = \"often\": write a duration",
        ),
        (
            "[[notify]]\nkind = \"terminal\"\nchannel = \"#ml\"\n",
            "unknown field `channel`",
        ),
        (
            "[[notify]]\nkind = \"slack\"\nurl = \"hooks.slack.com/x\"\n",
            "write the whole address, starting with https://",
        ),
    ] {
        let e = refused(text);
        assert!(e.contains(says), "{text}: {e}");
    }
    let e = refused("[[notify]]\nkind = \"terminal\"\n[[notify]]\nkind = \"ntfy\"\n");
    assert!(e.contains("[[notify]] #2 (ntfy)"), "{e}");
}

#[test]
fn a_url_file_is_read_trimmed_from_the_config_files_directory_and_named_when_it_cannot_be() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hook"),
        format!("  https://example.com{SECRET}\n\n"),
    )
    .unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        "[[notify]]\nkind = \"webhook\"\nurl-file = \"hook\"\n",
    )
    .unwrap();
    let c = Config::load(&config).unwrap();
    assert_eq!(
        c.notify[0].address().unwrap().expose().as_str(),
        format!("https://example.com{SECRET}")
    );
    assert_eq!(
        c.notify[0].url_file.as_deref(),
        Some(dir.path().join("hook").as_path())
    );

    std::fs::write(
        &config,
        "[[notify]]\nkind = \"webhook\"\nurl-file = \"missing\"\n",
    )
    .unwrap();
    let e = Config::load(&config).unwrap_err().to_string();
    assert!(
        e.contains("url-file = \"missing\"")
            && e.contains(&dir.path().join("missing").display().to_string())
            && e.contains("put the URL in that file"),
        "{e}"
    );

    std::fs::write(dir.path().join("hook"), format!("example.com{SECRET}")).unwrap();
    std::fs::write(
        &config,
        "[[notify]]\nkind = \"webhook\"\nurl-file = \"hook\"\n",
    )
    .unwrap();
    let e = Config::load(&config).unwrap_err().to_string();
    assert!(e.contains("starting with https://"), "{e}");
    assert!(
        !e.contains("secret"),
        "the error never shows the file's text: {e}"
    );
}

#[test]
fn a_printed_config_shows_the_urls_host_only() {
    let c = Config::parse(&format!(
        "[[notify]]\nkind = \"slack\"\nurl = \"https://hooks.slack.com{SECRET}\"\n"
    ))
    .unwrap();
    for shown in [toml::to_string_pretty(&c).unwrap(), format!("{c:?}")] {
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("https://hooks.slack.com/…"), "{shown}");
    }
    let printed = toml::to_string_pretty(&c).unwrap();
    assert!(printed.contains("[[notify]]"), "{printed}");
    let e = refused(&printed);
    assert!(e.contains("redacted form"), "{e}");
}

#[test]
fn no_target_prints_nothing() {
    let printed = toml::to_string_pretty(&Config::default()).unwrap();
    assert!(!printed.contains("notify"), "{printed}");
}

#[test]
fn a_url_file_under_home_or_relative_is_named_by_its_absolute_path() {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let written = Path::new("~/.config/gantry/slack-url");
    match home {
        Some(home) => assert_eq!(
            resolve_path(written, None),
            home.join(".config/gantry/slack-url")
        ),
        None => assert!(resolve_path(written, None).is_absolute()),
    }
    let relative = resolve_path(Path::new("hook"), Some(Path::new("conf")));
    assert!(
        relative.is_absolute() && relative.ends_with("conf/hook"),
        "{relative:?}"
    );
    assert_eq!(
        resolve_path(Path::new("/etc/hook"), Some(Path::new("conf"))),
        Path::new("/etc/hook")
    );
}
