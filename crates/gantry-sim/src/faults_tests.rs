//! Parsing `--fault` values, their names, and the set of faults in force.

use super::*;

#[test]
fn parses_every_fault() {
    assert_eq!(
        "watch-drop=5".parse(),
        Ok(Fault::WatchDrop(Duration::from_secs(5)))
    );
    assert_eq!(
        "log-cut=0.5".parse(),
        Ok(Fault::LogCut(Duration::from_millis(500)))
    );
    assert_eq!("watch-gone".parse(), Ok(Fault::WatchGone));
    assert_eq!("http-429=10".parse(), Ok(Fault::Http429(10)));
    assert_eq!("http-503=100%".parse(), Ok(Fault::Http503(100)));
    assert_eq!(
        "restart=3".parse(),
        Ok(Fault::Restart(Duration::from_secs(3)))
    );
    assert_eq!(
        "token-expiry=2".parse(),
        Ok(Fault::TokenExpiry(Duration::from_secs(2)))
    );
    assert_eq!(
        "slow=250".parse(),
        Ok(Fault::Slow(Duration::from_millis(250)))
    );
    assert_eq!("gke-quota".parse(), Ok(Fault::GkeQuota));
    assert_eq!(
        "reconcile=2".parse(),
        Ok(Fault::Reconcile(Duration::from_secs(2)))
    );
    assert!("reconcile".parse::<Fault>().is_err());
    assert!("reconcile=0".parse::<Fault>().is_err());
    assert_eq!("gpu-quota=0".parse(), Ok(Fault::GpuQuota(0)));
    assert_eq!(
        "stockout=gpu-pool".parse(),
        Ok(Fault::Stockout {
            pool: "gpu-pool".into(),
            room: 0
        })
    );
    assert_eq!(
        "stockout=default-pool:1".parse(),
        Ok(Fault::Stockout {
            pool: "default-pool".into(),
            room: 1
        })
    );
    assert!("gpu-quota".parse::<Fault>().is_err());
    assert!("gpu-quota=-1".parse::<Fault>().is_err());
    assert!("stockout".parse::<Fault>().is_err());
    assert_eq!(
        "preempt=0.5:2".parse(),
        Ok(Fault::Preempt {
            every: Duration::from_millis(500),
            count: 2
        })
    );
    for bad in [
        "preempt",
        "preempt=5",
        "preempt=0:2",
        "preempt=5:0",
        "preempt=5:x",
    ] {
        assert!(bad.parse::<Fault>().is_err(), "{bad}");
    }
    let faults = Faults::new(vec!["stockout=gpu-pool".parse().unwrap()]);
    assert_eq!(faults.stockout("gpu-pool"), Some(0));
    assert_eq!(faults.stockout("default-pool"), None);
    assert_eq!(faults.gpu_quota(), None);
}

/// The fault an argument form of the table stands for, with a value in that form.
fn example(form: &str) -> String {
    let Some((name, arg)) = form.split_once('=') else {
        return form.to_string();
    };
    let value = match arg {
        "SECS" => "2",
        "PERCENT" => "10",
        "MS" => "250",
        "MESSAGE" => "boom",
        "GPUS" => "2",
        "POOL[:N]" => "gpu-pool:1",
        "SECS:COUNT" => "0.5:2",
        other => panic!("no example value for {other}"),
    };
    format!("{name}={value}")
}

/// Which kind a fault is. A new kind does not compile until it is numbered here, and
/// `KINDS` counts the numbers.
fn kind(fault: &Fault) -> usize {
    match fault {
        Fault::WatchDrop(_) => 0,
        Fault::LogCut(_) => 1,
        Fault::WatchGone => 2,
        Fault::Http429(_) => 3,
        Fault::Http503(_) => 4,
        Fault::Restart(_) => 5,
        Fault::TokenExpiry(_) => 6,
        Fault::Slow(_) => 7,
        Fault::GkeQuota => 8,
        Fault::GkeCreateError(_) => 9,
        Fault::GkePermissionDenied => 10,
        Fault::Reconcile(_) => 11,
        Fault::HostileStrings => 12,
        Fault::NoMetricsApi => 13,
        Fault::GpuQuota(_) => 14,
        Fault::Stockout { .. } => 15,
        Fault::Preempt { .. } => 16,
        Fault::NoDcgm => 17,
    }
}
const KINDS: usize = 18;

#[test]
fn every_form_in_the_table_parses_to_a_fault_of_that_name() {
    for form in FAULT_FORMS {
        let given = example(form);
        let fault: Fault = given.parse().unwrap_or_else(|e| panic!("{given}: {e}"));
        let name = form.split('=').next().unwrap_or_default();
        assert_eq!(fault.name(), name, "{given}");
    }
}

#[test]
fn every_kind_of_fault_is_in_the_table_and_the_help_lists_the_table() {
    let kinds: std::collections::BTreeSet<usize> = FAULT_FORMS
        .iter()
        .filter_map(|form| example(form).parse::<Fault>().ok())
        .map(|fault| kind(&fault))
        .collect();
    assert_eq!(kinds, (0..KINDS).collect());
    assert_eq!(FAULT_FORMS.len(), KINDS, "one form per kind");
    assert_eq!(FAULT_NAMES, FAULT_FORMS.join(", "));
}

#[test]
fn each_fault_counts_the_times_it_fired() {
    let faults = Faults::default();
    assert_eq!(faults.times_fired("slow"), 0);
    faults.fired("slow");
    faults.fired("slow");
    assert_eq!(faults.times_fired("slow"), 2);
}

#[test]
fn a_fault_with_a_count_fires_that_many_times_in_all() {
    let faults = Faults::default();
    assert!(faults.fire_within("preempt", 2));
    assert!(faults.fire_within("preempt", 2));
    assert!(!faults.fire_within("preempt", 2));
    assert_eq!(faults.times_fired("preempt"), 2);
    assert!(
        faults.fire_within("preempt", 3),
        "a larger count allows more"
    );
}

#[test]
fn explains_bad_faults() {
    let e = "http-429=150"
        .parse::<Fault>()
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("0 to 100"), "{e}");
    let e = "nope"
        .parse::<Fault>()
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("unknown fault") && e.contains("watch-drop"),
        "{e}"
    );
    assert!("watch-drop".parse::<Fault>().is_err());
    assert!("watch-gone=3".parse::<Fault>().is_err());
}

#[test]
fn a_stockout_with_a_bad_count_or_no_pool_says_what_it_expects() {
    for bad in [
        "stockout=default-pool:x",
        "stockout=default-pool:",
        "stockout=default-pool:-1",
    ] {
        let e = bad.parse::<Fault>().unwrap_err().to_string();
        assert!(
            e.contains("the count after ':' must be a whole number of nodes, e.g. =default-pool:1"),
            "{bad}: {e}"
        );
    }
    for bad in ["stockout", "stockout=", "stockout=:1"] {
        let e = bad.parse::<Fault>().unwrap_err().to_string();
        assert!(e.contains("needs a node pool's name"), "{bad}: {e}");
    }
}

#[test]
fn a_stockout_hits_only_the_pool_of_exactly_its_name() {
    let faults = Faults::new(vec!["stockout=default-pool".parse().unwrap()]);
    assert_eq!(faults.stockout("default-pool"), Some(0));
    assert_eq!(faults.stockout("default-pool-on-demand"), None);
    assert_eq!(faults.stockout("default"), None);
}

#[test]
fn set_replaces_same_kind() {
    let faults = Faults::default();
    faults.set(Fault::Http429(10));
    faults.set(Fault::Http429(20));
    assert_eq!(faults.http_429(), 20);
    faults.clear();
    assert_eq!(faults.http_429(), 0);
}
