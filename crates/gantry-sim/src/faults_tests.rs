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
        Ok(Fault::Stockout("gpu-pool".into()))
    );
    assert!("gpu-quota".parse::<Fault>().is_err());
    assert!("gpu-quota=-1".parse::<Fault>().is_err());
    assert!("stockout".parse::<Fault>().is_err());
    let faults = Faults::new(vec![Fault::Stockout("gpu-pool".into())]);
    assert!(faults.stockout("gpu-pool") && !faults.stockout("default-pool"));
    assert_eq!(faults.gpu_quota(), None);
}

#[test]
fn every_fault_is_named_as_it_is_given_and_listed_in_the_help() {
    for given in [
        "watch-drop=5",
        "log-cut=1",
        "watch-gone",
        "http-429=10",
        "http-503=10",
        "restart=3",
        "token-expiry=2",
        "slow=250",
        "gke-quota",
        "gke-create-error=boom",
        "gke-permission-denied",
        "reconcile=2",
        "hostile-strings",
        "no-metrics-api",
        "gpu-quota=2",
        "stockout=gpu-pool",
    ] {
        let fault: Fault = given.parse().unwrap_or_else(|e| panic!("{given}: {e}"));
        let name = fault.name();
        assert!(given.starts_with(name), "{given} named {name}");
        assert!(FAULT_NAMES.contains(name), "{name} is not in FAULT_NAMES");
    }
    let faults = Faults::default();
    assert_eq!(faults.times_fired("slow"), 0);
    faults.fired("slow");
    faults.fired("slow");
    assert_eq!(faults.times_fired("slow"), 2);
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
fn set_replaces_same_kind() {
    let faults = Faults::default();
    faults.set(Fault::Http429(10));
    faults.set(Fault::Http429(20));
    assert_eq!(faults.http_429(), 20);
    faults.clear();
    assert_eq!(faults.http_429(), 0);
}
