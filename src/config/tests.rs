use super::*;

#[test]
fn defaults_are_the_seed() {
    let c = Config::default();
    assert_eq!(c.cluster.name, "ml-gke-cluster");
    assert_eq!(
        (c.cluster.machine_type.as_str(), c.cluster.node_count),
        ("n1-standard-1", 3)
    );
    assert_eq!(c.cluster.oauth_scopes.len(), 4);
    assert_eq!(c.job.name, "ml-training-job");
    assert_eq!(c.job.container, "ml-training-container");
    assert_eq!(c.job.selector(), "job=ml-training");
    assert_eq!(c.job.backoff_limit, 2);
    assert_eq!(c.job.image_for("p"), "gcr.io/p/ml-training-job:latest");
}

#[test]
fn the_idle_reminder_is_a_duration_and_half_an_hour_unless_set() {
    use std::time::Duration;
    assert_eq!(Config::default().idle_reminder(), Duration::from_secs(1800));
    let c = Config::parse("idle-reminder = \"1h 30m\"\nscale-to-zero-when-idle = true\n")
        .unwrap_or_default();
    assert_eq!(c.idle_reminder(), Duration::from_secs(5400));
    assert!(c.scale_to_zero_when_idle);
    let c = Config::parse("idle-reminder = \"2s\"\n").unwrap_or_default();
    assert_eq!(c.idle_reminder(), Duration::from_secs(2));
    for bad in ["soon", "-5m", ""] {
        let e = Config::parse(&format!("idle-reminder = \"{bad}\"\n"))
            .err()
            .unwrap_or_default();
        assert!(
            e.contains("idle-reminder") && e.contains("30m"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn unknown_keys_name_line_and_key() {
    let e = Config::parse("[cluster]\nname = \"x\"\nnode_cnt = 3\n")
        .err()
        .unwrap_or_default();
    assert!(e.contains("line 3") && e.contains("node_cnt"), "{e}");
    let e = Config::parse("[cluster]\nnode-count = 0\n")
        .err()
        .unwrap_or_default();
    assert!(e.contains("node-count"), "{e}");
}

#[test]
fn fail_exit_codes_are_read_and_checked() {
    let c = Config::parse("[job.recovery]\nfail-exit-codes = [42, 3]\n").unwrap_or_default();
    assert_eq!(c.job.recovery.fail_exit_codes_sorted(), vec![3, 42]);
    for (bad, says) in [
        ("[job.recovery]\nfail-exit-codes = [0]\n", "from 1 to 255"),
        ("[job.recovery]\nfail-exit-codes = [256]\n", "from 1 to 255"),
        (
            "[job]\nrestart-policy = \"OnFailure\"\n[job.recovery]\nfail-exit-codes = [3]\n",
            "needs job.restart-policy = \"Never\"",
        ),
        ("[job.recovery]\nretries = 3\n", "unknown field"),
        (
            "[job]\nrestart-policy = \"OnFailure\"\n[job.pod-failure-policy]\nrules = []\n",
            "needs job.restart-policy",
        ),
    ] {
        let e = Config::parse(bad).err().unwrap_or_default();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn a_relative_code_directory_is_the_config_files_and_an_absolute_one_stays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gantry.toml");
    std::fs::write(
        &path,
        "[job]\ncode = \"../trainer\"\ncommand = [\"python3\", \"train.py\"]\n",
    )
    .unwrap();
    let config = Config::load(&path).unwrap();
    assert_eq!(config.job.code, Some(dir.path().join("../trainer")));
    std::fs::write(&path, "[job]\ncode = \"/srv/trainer\"\n").unwrap();
    let config = Config::load(&path).unwrap();
    assert_eq!(
        config.job.code,
        Some(std::path::PathBuf::from("/srv/trainer"))
    );
}
