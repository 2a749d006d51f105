#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::format;
use super::*;

/// The seed's cluster (the config's defaults) where the simulator and the examples put it.
fn seed(location: &str, spot: bool) -> ClusterShape {
    ClusterShape {
        location: location.into(),
        pools: vec![PoolShape {
            name: "default-pool".into(),
            machine_type: "n1-standard-1".into(),
            nodes: 3,
            disk_type: "pd-balanced".into(),
            disk_size_gb: 100,
            accelerator: None,
            spot,
        }],
    }
}

fn gpu_pool(machine_type: &str, gpu: &str, count: u32) -> PoolShape {
    PoolShape {
        name: "gpu-pool".into(),
        machine_type: machine_type.into(),
        nodes: 1,
        disk_type: "pd-balanced".into(),
        disk_size_gb: 100,
        accelerator: Some(Accelerator {
            kind: gpu.into(),
            count,
        }),
        spot: false,
    }
}

fn assert_near(got: Option<f64>, want: f64) {
    let got = got.expect("a known price");
    assert!((got - want).abs() < 1e-5, "got {got}, want {want}");
}

/// A snapshot small enough to reason about: a GPU priced on its own (T4) and one sold only
/// inside its machine type (A100).
fn small() -> Catalogue {
    Catalogue::from_json(
        r#"{
 "about":{"date":"2026-01-01","generated":"2026-01-01T00:00:00Z","source":"test","gpuSource":"test",
  "feeSource":"test","currency":"USD","licence":"test"},
 "hoursPerMonth":730,
 "gkeClusterFeePerHour":0.1,
 "disks":{"pd-balanced":{"us-central1":0.1}},
 "gpus":{"nvidia-tesla-t4":{"hourly":{"us-central1":[0.35,0.14]}},"nvidia-tesla-a100":{"hourly":{}}},
 "machineTypes":{
  "n1-standard-4":{"hourly":{"us-central1":[0.19,0.067]}},
  "a2-highgpu-1g":{"gpus":{"nvidia-tesla-a100":1},"hourly":{"us-central1":[3.67,1.93]}}
 }
}"#,
    )
    .unwrap()
}

#[test]
fn the_embedded_snapshot_parses_and_says_where_its_prices_come_from_and_when() {
    let prices = Catalogue::embedded();
    let about = prices.about();
    assert_eq!(about.date, "2026-07-30");
    assert!(
        about
            .source
            .contains("Cyclenerd/google-cloud-pricing-cost-calculator"),
        "{about:?}"
    );
    assert!(about.licence.contains("CC BY 4.0") && about.licence.contains("Apache-2.0"));
    assert_eq!(about.currency, "USD");
    assert_eq!(prices.hours_per_month(), 730.0);
    assert_eq!(prices.cluster_fee_per_hour(), 0.10);
    assert_eq!(prices.regions().count(), 43);
}

#[test]
fn the_snapshot_has_every_size_of_the_families_people_train_on() {
    let prices = Catalogue::embedded();
    let names: Vec<&str> = prices.machine_type_names().collect();
    for family in ["n1", "n2", "e2", "c2", "c3", "a2", "a3", "g2"] {
        let sizes = names
            .iter()
            .filter(|n| n.starts_with(&format!("{family}-")))
            .count();
        assert!(sizes >= 5, "{family}: {sizes} sizes");
    }
    for name in [
        "e2-micro",
        "n2-standard-128",
        "a2-megagpu-16g",
        "a3-highgpu-8g",
        "g2-standard-96",
    ] {
        assert!(names.contains(&name), "{name}");
    }
}

#[test]
fn every_price_in_the_snapshot_is_above_zero_and_spot_is_never_dearer() {
    let prices = Catalogue::embedded();
    let regions: Vec<&str> = prices.regions().collect();
    let mut priced = 0;
    for name in prices.machine_type_names() {
        for region in &regions {
            if let Ok(on_demand) = prices.machine_type(name, region, Provisioning::OnDemand) {
                let spot = prices
                    .machine_type(name, region, Provisioning::Spot)
                    .unwrap();
                assert!(spot > 0.0 && spot <= on_demand, "{name} in {region}");
                priced += 1;
            }
        }
    }
    assert!(priced > 4000, "{priced} prices");
}

#[test]
fn the_seed_cluster_costs_the_fee_its_three_nodes_and_their_disks() {
    // Read off pricing.yml by hand: n1-standard-1 in us-central1 costs 0.04749975 an hour;
    // pd-balanced 0.10 per GB-month; GKE 0.10 per cluster-hour.
    let node = 0.04749975 + 100.0 * 0.10 / 730.0;
    let cost = Catalogue::embedded().cluster_cost(&seed("us-central1-a", false));
    assert_eq!(cost.fee, 0.10);
    assert_eq!(cost.pools.len(), 1);
    assert_eq!(cost.pools[0].nodes, 3);
    assert_near(cost.pools[0].per_node.usd(), node);
    assert_near(cost.pools[0].per_hour.usd(), 3.0 * node);
    assert_near(cost.per_hour.usd(), 0.10 + 3.0 * node);
    assert_eq!(
        format::estimate(&cost.per_hour, 730.0),
        "≈ $0.28/h, $207/month"
    );
}

#[test]
fn the_seed_machines_alone_are_the_issue_figure() {
    let prices = Catalogue::embedded();
    let machine = prices.machine_type("n1-standard-1", "us-central1-a", Provisioning::OnDemand);
    let three = Estimate::from(machine).times(3.0);
    assert_eq!(
        format::estimate(&three, prices.hours_per_month()),
        "≈ $0.14/h, $104/month"
    );
}

#[test]
fn a_zone_is_priced_as_its_region() {
    let prices = Catalogue::embedded();
    assert_eq!(prices.region_of("us-central1-a"), Some("us-central1"));
    assert_eq!(prices.region_of("us-central1"), Some("us-central1"));
    assert_eq!(prices.region_of("europe-west10-b"), Some("europe-west10"));
    assert_eq!(
        prices.region_of("northamerica-northeast1-c"),
        Some("northamerica-northeast1")
    );
    for nowhere in [
        "",
        "us",
        "us-central1-",
        "us-central1-ab",
        "us-central1-A",
        "mars-north1-a",
    ] {
        assert_eq!(prices.region_of(nowhere), None, "{nowhere:?}");
    }
    let zone = prices.machine_type("e2-medium", "europe-west4-b", Provisioning::OnDemand);
    let region = prices.machine_type("e2-medium", "europe-west4", Provisioning::OnDemand);
    assert_eq!(zone, region);
    assert_eq!(
        prices.disk_per_gb_month("pd-ssd", "europe-west4-a"),
        prices.disk_per_gb_month("pd-ssd", "europe-west4")
    );
}

#[test]
fn spot_nodes_cost_the_spot_price_and_their_disks_the_same() {
    let prices = Catalogue::embedded();
    // pricing.yml: n1-standard-1 in us-central1, hour_spot 0.0167525.
    let spot = prices.machine_type("n1-standard-1", "us-central1-a", Provisioning::Spot);
    assert_near(spot.ok(), 0.0167525);
    let on_demand = prices.cluster_cost(&seed("us-central1-a", false));
    let on_spot = prices.cluster_cost(&seed("us-central1-a", true));
    let saved = on_demand.per_hour.usd().unwrap() - on_spot.per_hour.usd().unwrap();
    assert_near(Some(saved), 3.0 * (0.04749975 - 0.0167525));
}

#[test]
fn disks_cost_by_type_per_gb_month_and_zone() {
    // pricing.yml, us-central1: hdd 0.04, balanced 0.1, ssd 0.17 per GB-month.
    let prices = Catalogue::embedded();
    for (disk, want) in [
        ("pd-standard", 0.04),
        ("pd-balanced", 0.10),
        ("pd-ssd", 0.17),
    ] {
        assert_near(prices.disk_per_gb_month(disk, "us-central1-f").ok(), want);
    }
    let missing = prices
        .disk_per_gb_month("hyperdisk-ml", "us-central1-f")
        .unwrap_err();
    assert_eq!(missing.to_string(), "disk type hyperdisk-ml in us-central1");
}

#[test]
fn a_machine_type_without_a_price_makes_the_cost_unknown_and_says_which() {
    let prices = Catalogue::embedded();
    let mut cluster = seed("us-central1-a", false);
    cluster.pools[0].machine_type = "n9-imaginary-4".into();
    let cost = prices.cluster_cost(&cluster);
    let missing = Unpriced {
        item: Item::MachineType,
        name: "n9-imaginary-4".into(),
        region: "us-central1".into(),
    };
    assert_eq!(cost.per_hour, Estimate::Unknown(vec![missing.clone()]));
    assert_eq!(cost.pools[0].per_node, Estimate::Unknown(vec![missing]));
    assert_eq!(
        format::estimate(&cost.per_hour, 730.0),
        "price unknown (machine type n9-imaginary-4 in us-central1)"
    );
    assert_eq!(
        format::over_hours(&cost.per_hour, 5.0),
        "price unknown (machine type n9-imaginary-4 in us-central1)"
    );
}

#[test]
fn a_location_without_prices_is_unknown_rather_than_free() {
    let cost = Catalogue::embedded().cluster_cost(&seed("mars-north1-a", false));
    let Estimate::Unknown(missing) = &cost.per_hour else {
        panic!("{cost:?}")
    };
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert_eq!(missing[0].to_string(), "location mars-north1-a");
}

#[test]
fn a_machine_type_priced_elsewhere_is_unknown_in_a_region_without_it() {
    // No N1 in europe-north2 in this snapshot.
    let prices = Catalogue::embedded();
    let missing = prices.machine_type("n1-standard-1", "europe-north2-a", Provisioning::OnDemand);
    assert_eq!(
        missing.unwrap_err().to_string(),
        "machine type n1-standard-1 in europe-north2"
    );
    assert!(
        prices
            .machine_type("e2-medium", "europe-north2-a", Provisioning::OnDemand)
            .is_ok()
    );
}

#[test]
fn a_gpu_pool_adds_attached_gpus_per_node() {
    let prices = small();
    let cluster = ClusterShape {
        location: "us-central1-c".into(),
        pools: vec![gpu_pool("n1-standard-4", "nvidia-tesla-t4", 2)],
    };
    let cost = prices.cluster_cost(&cluster);
    let node = 0.19 + 2.0 * 0.35 + 100.0 * 0.1 / 730.0;
    assert_near(cost.pools[0].per_node.usd(), node);
    assert_near(cost.per_hour.usd(), 0.1 + node);
    let mut spot = cluster.clone();
    spot.pools[0].spot = true;
    let node = 0.067 + 2.0 * 0.14 + 100.0 * 0.1 / 730.0;
    assert_near(prices.cluster_cost(&spot).per_hour.usd(), 0.1 + node);
}

#[test]
fn gpus_a_machine_type_carries_are_not_paid_twice() {
    let prices = small();
    let pool = gpu_pool("a2-highgpu-1g", "nvidia-tesla-a100", 1);
    assert_near(
        prices.node_per_hour(&pool, "us-central1-a").usd(),
        3.67 + 10.0 / 730.0,
    );
    assert_eq!(
        prices.gpus_carried_by("a2-highgpu-1g").collect::<Vec<_>>(),
        [("nvidia-tesla-a100", 1)]
    );
    // Alone, such a GPU has no price: it is only sold with its machine types.
    assert!(
        prices
            .gpu("nvidia-tesla-a100", "us-central1", Provisioning::OnDemand)
            .is_err()
    );
    assert_eq!(
        prices
            .machine_types_carrying("nvidia-tesla-a100")
            .collect::<Vec<_>>(),
        ["a2-highgpu-1g"]
    );
}

#[test]
fn a_gpu_without_a_price_is_named_with_everything_else_missing() {
    let prices = small();
    let mut cluster = seed("us-central1-a", false);
    cluster
        .pools
        .push(gpu_pool("n1-standard-4", "nvidia-tesla-v100", 1));
    cluster
        .pools
        .push(gpu_pool("n1-standard-4", "nvidia-tesla-v100", 4));
    let cost = prices.cluster_cost(&cluster);
    let text = format::estimate(&cost.per_hour, 730.0);
    assert_eq!(
        text,
        "price unknown (machine type n1-standard-1 in us-central1; GPU nvidia-tesla-v100 in us-central1)"
    );
}

#[test]
fn the_embedded_l4_is_what_a_g2_costs_beyond_its_vcpus() {
    // pricing.yml, us-central1: g2-standard-4 0.706832255, g2-standard-8 0.853624271 an hour.
    // The 4 more vCPUs (with their memory) cost 0.146792016, so the L4 is 0.560040239.
    let prices = Catalogue::embedded();
    let hour = |name: &str| {
        prices
            .machine_type(name, "us-central1", Provisioning::OnDemand)
            .unwrap()
    };
    let vcpus = hour("g2-standard-8") - hour("g2-standard-4");
    let l4 = prices
        .gpu("nvidia-l4", "us-central1-a", Provisioning::OnDemand)
        .ok();
    assert_near(l4, hour("g2-standard-4") - vcpus);
    assert_near(l4, 0.56004);
    let pool = gpu_pool("g2-standard-4", "nvidia-l4", 1);
    assert_near(
        prices.node_per_hour(&pool, "us-central1-a").usd(),
        0.706832 + 10.0 / 730.0,
    );
}

#[test]
fn a_pool_scaled_to_zero_costs_nothing_but_the_fee_remains() {
    let mut cluster = seed("us-central1-a", false);
    cluster.pools[0].nodes = 0;
    let cost = Catalogue::embedded().cluster_cost(&cluster);
    assert_eq!(cost.pools[0].per_hour, Estimate::ZERO);
    assert!(cost.pools[0].per_node.usd().unwrap() > 0.0);
    assert_eq!(cost.per_hour, Estimate::Known(0.10));
}

#[test]
fn unknown_items_are_listed_once_and_in_order() {
    let missing = |name: &str| Unpriced {
        item: Item::Gpu,
        name: name.into(),
        region: "r".into(),
    };
    let a = Estimate::Unknown(vec![missing("b")]);
    let b = Estimate::Unknown(vec![missing("a"), missing("b")]);
    assert_eq!(
        a.plus(b).plus(Estimate::Known(1.0)),
        Estimate::Unknown(vec![missing("a"), missing("b")])
    );
    assert_eq!(
        [Estimate::Known(1.0), Estimate::Known(2.5)]
            .into_iter()
            .sum::<Estimate>(),
        Estimate::Known(3.5)
    );
}

#[test]
fn amounts_read_as_dollars_and_cents() {
    assert_eq!(format::usd(0.14249925), "$0.14");
    assert_eq!(format::usd(1234.567), "$1,234.57");
    assert_eq!(format::usd(1_000_000.0), "$1,000,000.00");
    assert_eq!(format::usd(0.0), "$0.00");
    assert_eq!(format::usd(0.0025), "$0.0025");
    assert_eq!(format::usd(-1234.5), "-$1,234.50");
    assert_eq!(format::usd_rounded(104.0249), "$104");
    assert_eq!(format::usd_rounded(64597.7), "$64,598");
    assert_eq!(format::usd_rounded(7.3), "$7.30");
    assert_eq!(
        format::per_hour_and_month(88.49, 730.0),
        "$88.49/h, $64,598/month"
    );
}

#[test]
fn cost_so_far_is_the_hourly_price_over_the_hours() {
    let hourly = Estimate::Known(0.2836);
    assert_eq!(format::over_hours(&hourly, 2.5), "$0.71");
    assert_eq!(format::over_hours(&hourly, 0.0), "$0.00");
    assert_eq!(format::over_hours(&hourly, -1.0), "$0.00");
}
