//! GPUs in the embedded snapshot: those attached to N1 machines priced per GPU from their own
//! source, those an accelerator-optimized machine type carries priced with it and never again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::format;
use super::*;

fn pool(machine_type: &str, gpu: Option<(&str, u32)>, spot: bool) -> PoolShape {
    PoolShape {
        name: "gpu-pool".into(),
        machine_type: machine_type.into(),
        nodes: 4,
        disk_type: "pd-balanced".into(),
        disk_size_gb: 100,
        accelerator: gpu.map(|(kind, count)| Accelerator {
            kind: kind.into(),
            count,
        }),
        spot,
    }
}

fn assert_near(got: Option<f64>, want: f64) {
    let got = got.expect("a known price");
    assert!((got - want).abs() < 1e-6, "got {got}, want {want}");
}

/// 100 GB of pd-balanced in us-central1 ($0.10 per GB-month), per hour.
const DISK: f64 = 100.0 * 0.10 / 730.0;

#[test]
fn the_embedded_snapshot_says_where_and_of_when_its_attached_gpu_prices_are() {
    let about = Catalogue::embedded().about();
    assert!(
        about.gpu_source.contains(
            "skypilot-org/skypilot-catalog/blob/006059e0f18acb1341e22a27751e9f80df6ba92f/"
        ),
        "{about:?}"
    );
    assert!(
        about.gpu_source.contains("Cloud Billing Catalog"),
        "{about:?}"
    );
    assert_eq!(about.gpu_date, "2026-02-21/2026-03-18");
    assert!(about.licence.contains("skypilot-catalog"), "{about:?}");
}

#[test]
fn a_t4_in_us_central1_costs_its_list_price_on_demand_and_its_spot_price_on_spot() {
    let prices = Catalogue::embedded();
    let t4 = |provisioning| prices.gpu("nvidia-tesla-t4", "us-central1-a", provisioning);
    assert_near(t4(Provisioning::OnDemand).ok(), 0.35);
    assert_near(t4(Provisioning::Spot).ok(), 0.175);
}

#[test]
fn an_n1_node_costs_its_machine_and_each_attached_gpu() {
    // n1-standard-4 in us-central1: 0.189999 on demand, 0.06701 spot; a T4 0.35 and 0.175.
    let prices = Catalogue::embedded();
    let two_t4 = pool("n1-standard-4", Some(("nvidia-tesla-t4", 2)), false);
    assert_near(
        prices.node_per_hour(&two_t4, "us-central1-a").usd(),
        0.189999 + 2.0 * 0.35 + DISK,
    );
    let spot = pool("n1-standard-4", Some(("nvidia-tesla-t4", 2)), true);
    assert_near(
        prices.node_per_hour(&spot, "us-central1-a").usd(),
        0.06701 + 2.0 * 0.175 + DISK,
    );
    let v100 = pool("n1-standard-8", Some(("nvidia-tesla-v100", 1)), false);
    let machine = prices
        .machine_type("n1-standard-8", "us-central1", Provisioning::OnDemand)
        .unwrap();
    assert_near(
        prices.node_per_hour(&v100, "us-central1-b").usd(),
        machine + 2.48 + DISK,
    );
}

#[test]
fn a_machine_type_carrying_its_gpus_is_priced_whole_and_its_gpus_not_again() {
    // a2-highgpu-1g in us-central1: 3.673385 an hour with its A100; g2-standard-4 0.706832 with
    // its L4, which has a price of its own too (derived from the G2 types).
    let prices = Catalogue::embedded();
    let a2 = pool("a2-highgpu-1g", Some(("nvidia-tesla-a100", 1)), false);
    assert_near(
        prices.node_per_hour(&a2, "us-central1-a").usd(),
        3.673385 + DISK,
    );
    let g2 = pool("g2-standard-4", Some(("nvidia-l4", 1)), false);
    assert!(
        prices
            .gpu("nvidia-l4", "us-central1", Provisioning::OnDemand)
            .is_ok()
    );
    assert_near(
        prices.node_per_hour(&g2, "us-central1-a").usd(),
        0.706832 + DISK,
    );
    // Whatever the pool calls its GPUs, a type that carries GPUs has them in its price.
    let named_otherwise = pool("a2-highgpu-1g", Some(("nvidia-tesla-t4", 1)), false);
    assert_eq!(
        prices.node_per_hour(&named_otherwise, "us-central1-a"),
        prices.node_per_hour(&a2, "us-central1-a")
    );
}

#[test]
fn an_unknown_accelerator_is_unknown_and_named_never_free() {
    let prices = Catalogue::embedded();
    let k80 = pool("n1-standard-4", Some(("nvidia-tesla-k80", 1)), false);
    let cost = prices.node_per_hour(&k80, "us-central1-a");
    assert_eq!(
        cost,
        Estimate::Unknown(vec![Unpriced {
            item: Item::Gpu,
            name: "nvidia-tesla-k80".into(),
            region: "us-central1".into(),
        }])
    );
    assert_eq!(
        format::estimate(&cost, 730.0),
        "price unknown (GPU nvidia-tesla-k80 in us-central1)"
    );
}

#[test]
fn a_gpu_in_a_region_its_source_lacks_is_unknown_though_the_machine_is_priced() {
    // The N1 is priced in europe-north1; the T4's source has no price there.
    let prices = Catalogue::embedded();
    assert!(
        prices
            .machine_type("n1-standard-4", "europe-north1", Provisioning::Spot)
            .is_ok()
    );
    let t4 = pool("n1-standard-4", Some(("nvidia-tesla-t4", 1)), true);
    let cost = prices.node_per_hour(&t4, "europe-north1-a");
    assert_eq!(cost.usd(), None);
    assert_eq!(
        format::estimate(&cost, 730.0),
        "price unknown (GPU nvidia-tesla-t4 in europe-north1)"
    );
}

#[test]
fn every_attached_gpu_has_prices_above_zero_and_spot_never_dearer() {
    let prices = Catalogue::embedded();
    let regions: Vec<&str> = prices.regions().collect();
    for gpu in [
        "nvidia-tesla-t4",
        "nvidia-tesla-v100",
        "nvidia-tesla-p100",
        "nvidia-tesla-p4",
    ] {
        let mut priced = 0;
        for region in &regions {
            if let Ok(on_demand) = prices.gpu(gpu, region, Provisioning::OnDemand) {
                let spot = prices.gpu(gpu, region, Provisioning::Spot).unwrap();
                assert!(spot > 0.0 && spot <= on_demand, "{gpu} in {region}");
                priced += 1;
            }
        }
        assert!(priced >= 5, "{gpu}: {priced} regions");
    }
}

#[test]
fn no_gpus_or_zero_gpus_add_nothing() {
    let prices = Catalogue::embedded();
    let bare = prices.node_per_hour(&pool("n1-standard-4", None, false), "us-central1-a");
    let zero = pool("n1-standard-4", Some(("nvidia-tesla-t4", 0)), false);
    assert_eq!(prices.node_per_hour(&zero, "us-central1-a"), bare);
    assert_near(bare.usd(), 0.189999 + DISK);
}
