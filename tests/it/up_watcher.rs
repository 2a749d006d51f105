//! `gantry up` with `[watcher] in-cluster = true`, end to end on the simulator (images named
//! `…/gantry` run as this build): `gantry plan` lists the watcher to be made with its cost,
//! `up --wait` makes the cluster and then the watcher, and waits for its pod; the plan then says
//! the watcher is there and current, and `--exit-code` has nothing to do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;

use crate::cli_flow::Sim;

const CONFIG: &str = "[watcher]\nin-cluster = true\nimage = \"example.com/team/gantry:test\"\n";

#[test]
fn up_makes_the_in_cluster_watcher_and_the_plan_then_says_it_is_current() {
    let sim = Sim::start_with(&["--time-scale", "0.005"], CONFIG);
    let before = sim.ok(&["plan"]);
    assert!(
        before.contains("  + deployment gantry-watcher-ml-training-job in default: gantry watch"),
        "{before}"
    );
    assert!(before.contains("Watcher cost: ≈ $"), "{before}");

    let up = sim.ok(&["up", "--wait"]);
    assert!(
        up.contains("watcher gantry-watcher-ml-training-job installed in namespace default"),
        "{up}"
    );
    assert!(up.contains("watcher ready: pod gantry-watcher-"), "{up}");
    let status: Value = serde_json::from_str(&sim.ok(&["watcher", "status", "--json"])).unwrap();
    assert_eq!(status["ready"], true, "{status:#}");
    assert_eq!(status["image"], "example.com/team/gantry:test");

    let plan: Value = serde_json::from_str(&sim.ok(&["plan", "--json"])).unwrap();
    assert_eq!(plan["action"], "none", "{plan:#}");
    assert_eq!(plan["watcher"]["state"]["is"], "current", "{plan:#}");
    let after = sim.ok(&["plan"]);
    assert!(
        after.contains("  = deployment gantry-watcher-ml-training-job in default: current"),
        "{after}"
    );
    let exit = sim.gantry(&["plan", "--exit-code"]);
    assert_eq!(exit.status.code(), Some(0), "{after}");
}
