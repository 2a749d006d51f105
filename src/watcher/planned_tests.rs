#![allow(clippy::unwrap_used)]

use super::*;
use crate::pricing::Provisioning;

fn config() -> Config {
    let mut config = Config::default();
    config.watcher.in_cluster = true;
    config.watcher.image = Some("example.com/team/gantry:1".into());
    config.watcher.authorized_keys = Some("/dev/null".into());
    config.watcher.operators = Some("/dev/null".into());
    config
}

fn planned(config: &Config, there: Result<Option<&There>, String>) -> Planned {
    let desired = Desired::in_cluster(config, None).unwrap().unwrap();
    Planned::of(&desired, config, "us-central1-a", there)
}

/// What the watcher's Deployment says once `install` made it from `config`.
fn installed(config: &Config) -> There {
    let desired = Desired::in_cluster(config, None).unwrap().unwrap();
    let mut deployment = desired.plan.deployment();
    deployment.metadata.annotations = Some(
        [(
            crate::watcher::DESIRED_ANNOTATION.to_string(),
            desired.fingerprint(),
        )]
        .into(),
    );
    There::of(&deployment)
}

#[test]
fn the_cost_is_the_requests_largest_share_of_a_default_pool_node_at_its_price() {
    let p = planned(&config(), Ok(None));
    let node = Catalogue::embedded()
        .machine_type("n1-standard-1", "us-central1-a", Provisioning::OnDemand)
        .unwrap();
    // An n1-standard-1 leaves pods 940m and 2780 MiB: 50m is the larger share of the two.
    let share = 50.0 / 940.0;
    assert_eq!(p.cost.by, Some("CPU"));
    assert!((p.cost.share.unwrap() - share).abs() < 1e-9);
    assert_eq!(p.cost.node_per_hour, Some(node));
    let per_hour = p.cost.per_hour.unwrap();
    assert!((per_hour - node * share).abs() < 1e-6, "{per_hour}");
    assert!((p.cost.per_month.unwrap() - per_hour * 730.0).abs() < 1e-6);

    let mut hungry = config();
    hungry.watcher.memory = "1Gi".into();
    let p = planned(&hungry, Ok(None));
    assert_eq!(p.cost.by, Some("memory"));
    assert!((p.cost.share.unwrap() - 1024.0 / 2780.0).abs() < 1e-9);
}

#[test]
fn a_spot_pool_prices_the_watcher_at_the_spot_price() {
    let mut spot = config();
    spot.cluster.spot = true;
    let p = planned(&spot, Ok(None));
    let node = Catalogue::embedded()
        .machine_type("n1-standard-1", "us-central1-a", Provisioning::Spot)
        .unwrap();
    assert_eq!(p.cost.node_per_hour, Some(node));
    assert!(p.lines().iter().any(|l| l.contains("n1-standard-1, spot")));
}

#[test]
fn a_new_watcher_lists_its_deployment_what_it_runs_its_objects_and_its_cost() {
    let lines = planned(&config(), Ok(None)).lines();
    assert_eq!(
        lines,
        [
            "Watcher ([watcher] in-cluster = true):",
            "  + deployment gantry-watcher-ml-training-job in default: gantry watch",
            "      image example.com/team/gantry:1, requests 50m CPU, 64Mi memory",
            "  + ServiceAccount, Role, RoleBinding, ClusterRole, ClusterRoleBinding",
            "  + ConfigMap, Secret",
            "Watcher cost: ≈ $0.0025/h, $1.84/month, its requests' share of a node",
            "  5.3% (by CPU) of default-pool's n1-standard-1, on-demand at $0.0475/h",
        ]
    );
    assert!(lines.iter().all(|l| l.chars().count() <= 78), "{lines:#?}");
}

#[test]
fn the_watcher_there_is_current_until_the_config_asks_for_another() {
    let there = installed(&config());
    let p = planned(&config(), Ok(Some(&there)));
    assert_eq!(p.state, State::Current);
    assert!(!p.needs_install());
    assert!(
        p.lines()[1]
            .starts_with("  = deployment gantry-watcher-ml-training-job in default: current")
    );

    let mut other = config();
    other.watcher.image = Some("example.com/team/gantry:2".into());
    other.watcher.cpu = "100m".into();
    let p = planned(&other, Ok(Some(&there)));
    assert!(p.needs_install());
    assert_eq!(
        p.state,
        State::Changes {
            what: vec![
                "image example.com/team/gantry:1 → example.com/team/gantry:2".into(),
                "requests 50m CPU, 64Mi memory → 100m CPU, 64Mi memory".into(),
            ]
        }
    );
    let mut retimed = config();
    retimed.job.backoff_limit = 5;
    let p = planned(&retimed, Ok(Some(&there)));
    assert_eq!(
        p.state,
        State::Changes {
            what: vec!["its settings, secrets or SSH keys".into()]
        }
    );
}

#[test]
fn a_cluster_that_cannot_be_read_says_so_and_still_needs_the_install() {
    let p = planned(&config(), Err("connection refused".into()));
    assert!(p.needs_install());
    let lines = p.lines();
    assert!(
        lines[2].contains("could not be read (connection refused)"),
        "{lines:?}"
    );
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["state"]["is"], "unknown");
    assert_eq!(json["runs"], "watch");
    assert_eq!(json["cost"]["machineType"], "n1-standard-1");
}

#[test]
fn an_unpriced_machine_type_leaves_the_cost_unknown_never_zero() {
    let mut odd = config();
    odd.cluster.machine_type = "z9-imaginary-1".into();
    let p = planned(&odd, Ok(None));
    assert_eq!(p.cost.per_hour, None);
    let last = p.lines().pop().unwrap();
    assert!(last.starts_with("Watcher cost: unknown"), "{last}");
}
