//! The GPU example config (`assets/config/gpu-indexed.toml`: 1 × n1-standard-2, and 4 spot
//! n1-standard-4 with a T4 each) through the real binary against a simulated cloud: its plan
//! and its cluster are priced, T4s included, and `gantry status` counts its nodes per machine
//! type from the Nodes' labels.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::gke_cli::{GkeCli as Env, PATIENCE};
use gantry_test_support::text;

use serde_json::{Value, json};

fn example() -> String {
    format!(
        "{}/assets/config/gpu-indexed.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The fee $0.10; n1-standard-2 on demand $0.095; 4 × (n1-standard-4 spot $0.06701 and a spot
/// T4 $0.175); each node's 100 GB of pd-balanced at $0.10 per GB-month: $1.2315 an hour.
const PER_HOUR: f64 = 1.2315;

#[tokio::test]
async fn the_gpu_example_is_priced_and_its_nodes_are_counted_per_machine_type() {
    let env = Env::start().await;
    let config = example();

    let plan = env.gantry(&["--config", &config, "plan"]).await;
    let shown = text(&plan.stdout);
    assert_eq!(plan.status.code(), Some(0), "{shown}{}", text(&plan.stderr));
    assert!(shown.contains("Cost: ≈ $1.23/h, $899/month"), "{shown}");
    assert!(!shown.contains("price unknown"), "{shown}");

    let up = env.gantry(&["--config", &config, "up", "--wait"]).await;
    assert_eq!(up.status.code(), Some(0), "{}", text(&up.stderr));

    // The Nodes register a moment after GKE says RUNNING: ask until all five are listed.
    let counted = json!([
        {"machineType": "n1-standard-2", "nodes": 1, "spot": 0},
        {"machineType": "n1-standard-4", "nodes": 4, "spot": 4},
    ]);
    let status = async {
        loop {
            let out = env.gantry(&["--config", &config, "status", "--json"]).await;
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            let status: Value = serde_json::from_slice(&out.stdout).unwrap();
            if status["cluster"]["nodesByMachineType"] == counted {
                return status;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    };
    let status = tokio::time::timeout(PATIENCE, status)
        .await
        .expect("the five nodes were never counted");
    let cluster = &status["cluster"];
    assert_eq!(cluster["nodeCount"], 5, "{cluster}");
    assert_eq!(cluster["costPerHour"], PER_HOUR, "{cluster}");
    assert!(cluster.get("costUnknown").is_none(), "{cluster}");

    let human = env.gantry(&["--config", &config, "status"]).await;
    let shown = text(&human.stdout);
    assert_eq!(human.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("\nnodes     1 x n1-standard-2, 4 x n1-standard-4 (4 spot)\n"),
        "{shown}"
    );
    assert!(shown.contains("cost      ≈ $1.23/h, $899/month"), "{shown}");
}
