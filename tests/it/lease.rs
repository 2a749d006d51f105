//! The recoverer's Lease nobody can jam, with engines in this process on a simulated cloud: a
//! record a stranger wrote claiming a renewal in 2099 for 2^31 − 1 seconds is taken over once
//! it has not changed for 15 s by the engine's own clock — told, and audited as the
//! recoverer's — and two engines whose wall clocks are five minutes apart neither rob each
//! other nor both act: a preempted gang is recovered exactly once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use gantry::config::{ClusterConfig, Config, JobConfig};
use gantry::engine::clock::Clock;
use gantry::engine::{Command, Engine, EngineHandle, World, open_session};
use gantry::k8s::status::AttemptPhase;
use gantry::sim::SimOptions;
use gantry::sim::faults::Fault;
use gantry_test_support as common;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, PostParams};

const LEASE: &str = "gantry-engine-ml-training-job";
const STRANGER: &str = "stranger@far pid 9";

/// Waits (bounded) for the world of `engine` to satisfy `done`.
async fn until(engine: &EngineHandle, what: &str, done: impl Fn(&World) -> bool) {
    let mut changed = engine.changed();
    tokio::time::timeout(common::WAIT_BOUND, async {
        loop {
            if done(&engine.model()) {
                return;
            }
            changed.changed().await.unwrap();
        }
    })
    .await
    .unwrap_or_else(|_| {
        let world = engine.model();
        let attempts: Vec<_> = world
            .jobs
            .attempts()
            .iter()
            .map(|a| (a.name.clone(), a.status, a.ended_by))
            .collect();
        panic!(
            "{what}: not within {:?}; attempts {attempts:?}, pods {:?}",
            common::WAIT_BOUND,
            world
                .jobs
                .pods_of(world.jobs.attempts().last().map_or("", |a| a.name.as_str()))
        )
    });
}

fn audit(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_a_stranger_claims_renewed_in_2099_for_2_31_seconds_is_taken_over_after_15_s_unchanged()
 {
    let sim_dir = tempfile::tempdir().unwrap();
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.01,
        clusters: vec![common::CLUSTER.into()],
        state_dir: Some(sim_dir.path().to_path_buf()),
        ..Default::default()
    })
    .await;
    let leases: Api<Lease> = Api::default_namespaced(common::kube_client(&cloud));
    let stranger: Lease = serde_json::from_value(serde_json::json!({
        "metadata": {"name": LEASE},
        "spec": {"holderIdentity": STRANGER, "leaseDurationSeconds": i32::MAX,
            "renewTime": "2099-01-01T00:00:00.000000Z",
            "acquireTime": "2099-01-01T00:00:00.000000Z", "leaseTransitions": 3},
    }))
    .unwrap();
    leases
        .create(&PostParams::default(), &stranger)
        .await
        .unwrap();

    let logs = tempfile::tempdir().unwrap();
    let options = common::engine_options(&cloud, sim_dir.path(), logs.path());
    let engine = Engine::start(open_session(&options, Config::default()).await.unwrap());
    let handle = engine.handle();
    let mut notices = handle.notices();
    until(&handle, "the Lease read", |w| w.lease.read()).await;
    let seen = Instant::now();
    assert_eq!(
        handle.model().lease.holder().map(|h| h.identity),
        Some(STRANGER.to_string())
    );
    until(&handle, "the Lease taken over", |w| w.lease.mine()).await;
    let took = seen.elapsed();
    eprintln!("taken over {took:?} after it was first seen");
    assert!(
        took >= Duration::from_secs(10) && took <= Duration::from_secs(20),
        "taken over {took:?} after it was first seen: not its claimed times, and within 20 s"
    );

    // Told, as `gantry watch` prints it, and audited as the recoverer's.
    let told = tokio::time::timeout(common::WAIT_BOUND, async {
        loop {
            let n = notices.recv().await.unwrap();
            if n.text.starts_with("recoverer: taken over") {
                return n;
            }
        }
    })
    .await
    .unwrap();
    assert!(
        told.text
            .starts_with(&format!("recoverer: taken over from {STRANGER}, silent ")),
        "{told:?}"
    );
    let took_over: Vec<serde_json::Value> = audit(&logs.path().join("audit.jsonl"))
        .into_iter()
        .filter(|l| l["command"] == "take-lease")
        .collect();
    let [line] = took_over.as_slice() else {
        panic!("one takeover audited: {took_over:?}")
    };
    assert_eq!(line["principal"]["name"], "gantry (recoverer)", "{line}");
    assert!(
        line["what"]
            .as_str()
            .unwrap()
            .starts_with(&format!("take the recoverer's Lease over from {STRANGER}")),
        "{line}"
    );
    let now = leases.get(LEASE).await.unwrap().spec.unwrap();
    assert_ne!(now.holder_identity.as_deref(), Some(STRANGER));
    assert_eq!(now.lease_transitions, Some(4));
    engine.stop().await;
}

/// A spot cluster and two indexed ranks that need some 1,500 simulated seconds (15 s here: time
/// for the reclaim to come on a busy machine before the run ends by itself). Each asks for 600m
/// of CPU, more than half a node's 940m, so the two never share a node: a reclaim takes one
/// rank, which is a gang to recover (two on one node would both go, and the Job would replace
/// them itself, with nothing to recover).
fn gang() -> Config {
    let mut job = JobConfig {
        completions: Some(2),
        parallelism: Some(2),
        indexed: true,
        backoff_limit: 2,
        ..JobConfig::default()
    };
    job.resources.cpu = Some("600m".into());
    job.env.insert("SIM_LOG_LINES".into(), "1500".into());
    job.env.insert("SIM_LINES_PER_SECOND".into(), "1".into());
    Config {
        cluster: ClusterConfig {
            spot: true,
            ..ClusterConfig::default()
        },
        job,
        ..Config::default()
    }
}

// Set aside until the simulator's reclaim is mended: in two of this stop's fresh-clone runs
// (`.ci/run` on two cores, the whole suite beside it) the reclaim came — the simulator counted
// it — and yet the rank on the reclaimed node ran to its end and succeeded, so there was no gang
// to recover. Alone, or beside fifty other tests, it passes. `cargo test --test it --
// --ignored lease::two_engines` runs it. `recovery_e2e` keeps exactly-once recovery with two
// engines watching in the suite.
#[ignore = "the simulator's Spot reclaim can miss its rank on a loaded machine (see above)"]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_engines_whose_wall_clocks_are_five_minutes_apart_recover_a_preempted_gang_once() {
    let sim_dir = tempfile::tempdir().unwrap();
    let cloud = common::cloud_with(SimOptions {
        time_scale: 0.01,
        state_dir: Some(sim_dir.path().to_path_buf()),
        ..Default::default()
    })
    .await;
    let (logs_a, logs_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let on_time = common::engine_options(&cloud, sim_dir.path(), logs_a.path());
    let ahead = gantry::engine::SessionOptions {
        clock: Clock::skewed(jiff::SignedDuration::from_mins(5)),
        ..common::engine_options(&cloud, sim_dir.path(), logs_b.path())
    };
    let a = Engine::start(open_session(&on_time, gang()).await.unwrap());
    let b = Engine::start(open_session(&ahead, gang()).await.unwrap());
    let (ha, hb) = (a.handle(), b.handle());
    ha.run(common::approved(Command::CreateCluster));
    until(&ha, "a connected", |w| w.connected).await;
    until(&hb, "b connected", |w| w.connected).await;
    until(&ha, "one engine holds the Lease", |w| {
        w.lease.holder().is_some()
    })
    .await;
    let holder = ha.model().lease.holder().unwrap().identity;
    ha.run(common::approved(Command::LaunchJob));
    // The reclaim comes once both ranks run: set from the start, it took the first rank to run
    // while the other was still starting, and on a busy machine that pod was gone and replaced
    // by the Job within the second, with no gang to recover.
    until(&ha, "both ranks run", |w| {
        let attempts = w.jobs.attempts();
        attempts.len() == 1
            && w.jobs
                .pods_of(&attempts[0].name)
                .iter()
                .filter(|p| p.phase == "Running")
                .count()
                == 2
    })
    .await;
    cloud.faults().set(Fault::Preempt {
        every: Duration::from_millis(100),
        count: 1,
    });
    // Its own bound, and the simulator's word on whether the reclaim came at all.
    until(&ha, "a rank's node is reclaimed", |_| {
        cloud.faults().times_fired("preempt") == 1
    })
    .await;
    until(&ha, "the recovered run succeeds", |w| {
        let attempts = w.jobs.attempts();
        attempts.len() == 2
            && attempts[0].status == AttemptPhase::Recovered
            && attempts[1].status == AttemptPhase::Succeeded
    })
    .await;

    let recoveries: Vec<serde_json::Value> = [&logs_a, &logs_b]
        .iter()
        .flat_map(|d| audit(&d.path().join("audit.jsonl")))
        .filter(|l| l["command"] == "recover")
        .collect();
    assert_eq!(recoveries.len(), 1, "exactly one recovery: {recoveries:?}");
    {
        let world = ha.model();
        let first = &world.jobs.attempts()[0];
        assert_eq!(
            first.recovered_into.as_deref(),
            Some(world.jobs.attempts()[1].name.as_str())
        );
        assert_eq!(
            first.ended_by,
            Some(gantry::vocabulary::attempt::EndedBy::Preempted)
        );
    }
    // Neither engine robbed the other: the Lease kept its first holder all along.
    let lease = Api::<Lease>::default_namespaced(common::kube_client(&cloud))
        .get(LEASE)
        .await
        .unwrap()
        .spec
        .unwrap();
    assert_eq!(lease.holder_identity.as_deref(), Some(holder.as_str()));
    assert_eq!(lease.lease_transitions, Some(0), "{lease:?}");
    a.stop().await;
    b.stop().await;
}

#[test]
fn gantry_watch_prints_the_takeover_of_a_silent_stranger_s_lease_and_the_audit_file_has_it() {
    if !common::kubectl_available() {
        return;
    }
    let sim = crate::cli_flow::Sim::start_with(&["--time-scale", "0.01"], "");
    sim.ok(&["up", "--wait"]);
    let lease = sim.home().join("lease.json");
    std::fs::write(
        &lease,
        serde_json::json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": LEASE, "namespace": "default"},
            "spec": {"holderIdentity": STRANGER, "leaseDurationSeconds": i32::MAX,
                "renewTime": "2099-01-01T00:00:00.000000Z"}})
        .to_string(),
    )
    .unwrap();
    let made = sim.kubectl(&["apply", "-f", lease.to_str().unwrap()]);
    assert!(made.status.success(), "{made:?}");
    let mut watch = sim
        .command(&["watch"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = watch.stdout.take().unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });
    let deadline = Instant::now() + common::WAIT_BOUND;
    let said = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no takeover said within {:?}", common::WAIT_BOUND));
        if line.contains("recoverer: taken over") {
            break line;
        }
    };
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(
        said.contains(&format!("recoverer: taken over from {STRANGER}, silent ")),
        "{said}"
    );
    let audited = audit(&sim.home().join("state/gantry/audit.jsonl"));
    assert!(
        audited.iter().any(|l| l["command"] == "take-lease"
            && l["principal"]["name"] == "gantry (recoverer)"
            && l["what"].as_str().is_some_and(|w| w.contains(STRANGER))),
        "{audited:#?}"
    );
}
