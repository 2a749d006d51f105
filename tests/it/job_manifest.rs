//! `--job-manifest FILE` through the real binary: every manifest in tests/job_manifests/valid
//! (and the seed's assets/ml-training-job.yaml) prints the `[job]` section its `.toml` beside it
//! holds; every one in tests/job_manifests/invalid fails with exit 2 and the message its first
//! line expects (`# expect: ...`), naming the file; a Job launched from a manifest on the
//! simulated cluster is the Job the manifest describes, with Gantry's labels and the flags over
//! it. Hostile files are errors, never panics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support as common;

use std::path::{Path, PathBuf};

use common::cases::cases;
use common::fixtures::{assert_refused, expected_message, fixture_files, gantry_config, repo_path};
use common::{CliEnv, text};
use gantry::config::{Config, JobConfig};
use gantry::k8s::manifest::{self, import};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use kube::api::Api;
use proptest::prelude::*;
use serde_json::{Value, json};

fn with_manifest(file: &Path) -> std::process::Output {
    gantry_config(&["--job-manifest".as_ref(), file.as_os_str()])
}

fn toml_of(text: &str) -> toml::Table {
    text.parse::<toml::Table>().unwrap()
}

#[test]
fn valid_manifests_print_their_job_section() {
    let mut cases: Vec<(PathBuf, PathBuf)> =
        fixture_files("tests/job_manifests/valid", &["yaml", "json"])
            .into_iter()
            .map(|f| (f.clone(), f.with_extension("toml")))
            .collect();
    cases.push((
        repo_path("assets/ml-training-job.yaml"),
        repo_path("tests/job_manifests/valid/ml-training-job.toml"),
    ));
    let defaults = toml_of(&text(&gantry_config(&[]).stdout));
    for (manifest, expected) in cases {
        let out = with_manifest(&manifest);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            manifest.display(),
            text(&out.stderr)
        );
        let printed = toml_of(&text(&out.stdout));
        let expected = toml_of(&std::fs::read_to_string(&expected).unwrap());
        assert_eq!(
            printed["job"],
            expected["job"],
            "{}: printed\n{}",
            manifest.display(),
            text(&out.stdout)
        );
        // Only the [job] section comes from the manifest.
        for section in ["cluster", "keys", "read-only"] {
            assert_eq!(printed[section], defaults[section], "{section}");
        }
        // What `gantry config` prints is a config file that gives the same Job.
        let again = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(again.path(), &out.stdout).unwrap();
        let reread = gantry_config(&["--config".as_ref(), again.path().as_os_str()]);
        assert_eq!(reread.status.code(), Some(0), "{}", text(&reread.stderr));
        assert_eq!(reread.stdout, out.stdout, "{}", manifest.display());
    }
}

#[test]
fn invalid_manifests_fail_with_their_message() {
    for file in fixture_files("tests/job_manifests/invalid", &["yaml"]) {
        let out = with_manifest(&file);
        assert_refused(&file, &out, &expected_message(&file));
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn the_manifest_replaces_the_config_files_job_section_only() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gantry.toml");
    std::fs::write(
        &config,
        "project = \"p\"\n[cluster]\nname = \"other-cluster\"\n[job]\nname = \"from-config\"\nimage = \"x\"\n",
    )
    .unwrap();
    let seed = repo_path("assets/ml-training-job.yaml");
    let out = gantry_config(&[
        "--config".as_ref(),
        config.as_os_str(),
        "--job-manifest".as_ref(),
        seed.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let printed = toml_of(&text(&out.stdout));
    assert_eq!(printed["project"].as_str(), Some("p"));
    assert_eq!(printed["cluster"]["name"].as_str(), Some("other-cluster"));
    assert_eq!(printed["job"]["name"].as_str(), Some("ml-training-job"));
    assert_eq!(
        printed["job"]["image"].as_str(),
        Some("gcr.io/demo-project/ml-training-job:latest")
    );
}

/// Files that are no manifest at all: each an exit 2 naming the file, none a panic.
#[test]
fn missing_and_hostile_files_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: Vec<u8>| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let laughs = {
        let mut s = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for (i, prev) in ('b'..='i').zip('a'..='h') {
            s.push_str(&format!(
                "{i}: &{i} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
            ));
        }
        s.into_bytes()
    };
    let cases: Vec<(PathBuf, &str)> = vec![
        (dir.path().join("not-there.yaml"), "cannot read"),
        (dir.path().to_path_buf(), "cannot read"),
        (
            write("huge.yaml", vec![b'#'; 2 << 20]),
            "larger than 1024 KiB",
        ),
        (
            write(
                "garbage.bin",
                (0..4096u32).map(|i| (i * 7 % 256) as u8).collect(),
            ),
            "not UTF-8 text",
        ),
        (
            write("control.yaml", b"kind: Job\x00\x01\x02\n".to_vec()),
            "line 1, column",
        ),
        (
            write("deep.yaml", "[".repeat(100_000).into_bytes()),
            "line ",
        ),
        (
            write("deep-maps.yaml", "{a: ".repeat(10_000).into_bytes()),
            "line ",
        ),
        (write("laughs.yaml", laughs), "repetition limit exceeded"),
        (
            write(
                "documents.yaml",
                "---\nkind: Job\n".repeat(10_000).into_bytes(),
            ),
            "holds 10000 YAML documents",
        ),
        (
            write("tab.yaml", b"kind: Job\n\tspec: {}\n".to_vec()),
            "line 2",
        ),
        (
            write("bom.yaml", b"\xef\xbb\xbf- x\n".to_vec()),
            "not a Kubernetes object",
        ),
    ];
    for (file, expect) in cases {
        let out = with_manifest(&file);
        assert_refused(&file, &out, expect);
        let stderr = text(&out.stderr);
        assert!(stderr.len() < 4096, "a short message: {stderr}");
    }
}

/// The same Job from the manifest as from the config file it was written from.
#[test]
fn a_manifest_makes_the_job_its_config_twin_makes() {
    let read = |p: &str| std::fs::read_to_string(repo_path(p)).unwrap();
    let from_manifest = import::parse(&read("tests/job_manifests/valid/gpu-indexed.yaml")).unwrap();
    let from_config = Config::load(&repo_path("assets/config/gpu-indexed.toml"))
        .unwrap()
        .job;
    assert_eq!(
        manifest::training_job(&from_manifest, None, 3).unwrap(),
        manifest::training_job(&from_config, None, 3).unwrap()
    );
    assert_eq!(
        manifest::worker_service(&from_manifest, 3).unwrap(),
        manifest::worker_service(&from_config, 3).unwrap()
    );

    let seed = import::parse(&read("assets/ml-training-job.yaml")).unwrap();
    assert_eq!(
        manifest::training_job(&seed, None, 1).unwrap(),
        manifest::training_job(&JobConfig::default(), Some("demo-project"), 1).unwrap()
    );
}

#[test]
fn on_failure_reaches_the_pod_template() {
    let text = std::fs::read_to_string(repo_path(
        "tests/job_manifests/valid/workers-on-failure.json",
    ))
    .unwrap();
    let cfg = import::parse(&text).unwrap();
    let job = serde_json::to_value(manifest::training_job(&cfg, None, 1).unwrap()).unwrap();
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "OnFailure");
    assert_eq!(pod["subdomain"], "sweep-peers");
    assert_eq!(job["spec"]["parallelism"], 1);
    let env = &pod["containers"][0]["env"];
    assert!(
        env.as_array()
            .unwrap()
            .contains(&json!({"name": "MASTER_ADDR", "value": "sweep-0.sweep-peers"})),
        "{env}"
    );
    let service = manifest::worker_service(&cfg, 1).unwrap().unwrap();
    assert_eq!(service.spec.unwrap().ports.unwrap()[0].port, 23456);
}

const GPU_MANIFEST: &str = include_str!("../job_manifests/valid/gpu-indexed.yaml");

/// A valid manifest with edits: pieces of YAML syntax, anchors, tags and junk put in, spans cut.
fn edited_manifest() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just(": "),
        Just("- "),
        Just("["),
        Just("]"),
        Just("{"),
        Just("}"),
        Just("&a "),
        Just("*a"),
        Just("<<: *a\n"),
        Just("!!str "),
        Just("!custom "),
        Just("? "),
        Just("|\n"),
        Just(">-\n"),
        Just("---\n"),
        Just("...\n"),
        Just("%YAML 1.2\n"),
        Just("\t"),
        Just("'"),
        Just("\""),
        Just("\n  "),
        Just("\0"),
        Just("-1"),
        Just("1e999"),
        Just("kind: Job\n"),
        Just("null"),
        Just("~"),
    ];
    let edit = (
        any::<prop::sample::Index>(),
        0..12usize,
        prop::option::of(piece),
    );
    prop::collection::vec(edit, 1..6).prop_map(|edits| {
        let mut text = GPU_MANIFEST.to_string();
        for (at, cut, put) in edits {
            let mut i = at.index(text.len() + 1);
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            let mut end = (i + cut).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.replace_range(i..end, put.unwrap_or(""));
        }
        text
    })
}

proptest! {
    #![proptest_config(cases(256))]

    /// Whatever the edits, an error or a [job] section that the config checks and the launch
    /// checks accept.
    #[test]
    fn edited_manifests_error_or_make_a_valid_job(text in edited_manifest()) {
        if let Ok(cfg) = import::parse(&text) {
            let config = Config { job: cfg.clone(), ..Config::default() };
            prop_assert!(config.validate().is_ok());
            prop_assert!(manifest::training_job(&cfg, None, 2).is_ok());
        }
    }

    #[test]
    fn any_text_is_an_error_not_a_panic(text in "\\PC{0,300}") {
        let _ = import::parse(&text);
    }
}

// --- On the simulated cluster ---------------------------------------------------------------

fn json_of<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

fn env_of(job: &Value) -> Vec<Value> {
    job["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_seed_manifest_launches_follows_and_retries() {
    let e = CliEnv::start().await;
    let seed = repo_path("assets/ml-training-job.yaml");
    let seed = seed.to_str().unwrap();
    let out = e
        .gantry(&["--job-manifest", seed, "launch", "--env", "SIM_LOG_LINES=6"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("launched Job ml-training-job (attempt 1)"));

    let jobs: Api<Job> = Api::default_namespaced(common::kube_client(&e.cloud));
    let job = json_of(&jobs.get("ml-training-job").await.unwrap());
    let labels = &job["spec"]["template"]["metadata"]["labels"];
    assert_eq!(labels["job"], "ml-training");
    assert_eq!(labels["app.kubernetes.io/managed-by"], "gantry");
    assert_eq!(labels["gantry.dev/job"], "ml-training-job");
    assert_eq!(labels["gantry.dev/attempt"], "1");
    assert_eq!(job["spec"]["backoffLimit"], 2);
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    assert_eq!(pod["containers"][0]["name"], "ml-training-container");
    assert_eq!(
        pod["containers"][0]["image"],
        "gcr.io/demo-project/ml-training-job:latest"
    );
    // The manifest's environment, then the run's (Gantry's own).
    let env = env_of(&job);
    assert_eq!(env[0], json!({"name": "SIM_LOG_LINES", "value": "6"}));
    let names: Vec<&str> = env[1..]
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["GANTRY_RUN_ID", "GANTRY_ATTEMPT", "GANTRY_RECOVERY"]
    );

    let out = e
        .gantry(&["--job-manifest", seed, "logs", "--follow"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 6, "{stdout}");
    assert!(
        stdout.lines().all(|l| l.starts_with("[ml-training-job-")),
        "{stdout}"
    );

    let out = e
        .gantry(&["--job-manifest", seed, "retry", "--env", "SIM_LOG_LINES=2"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("ml-training-job-2 (attempt 2)"));
    drop(e.cloud);
}

#[tokio::test(flavor = "multi_thread")]
async fn manifests_launch_as_written_with_the_flags_over_them() {
    let e = CliEnv::start().await;
    let client = common::kube_client(&e.cloud);
    let jobs: Api<Job> = Api::default_namespaced(client.clone());

    // A refused manifest creates nothing.
    let volumes = repo_path("tests/job_manifests/invalid/volumes.yaml");
    let out = e
        .gantry(&["--job-manifest", volumes.to_str().unwrap(), "launch"])
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(jobs.get_opt("train").await.unwrap().is_none());

    let gpu = repo_path("tests/job_manifests/valid/gpu-indexed.yaml");
    let out = e
        .gantry(&[
            "--job-manifest",
            gpu.to_str().unwrap(),
            "launch",
            "--image",
            "gcr.io/my-project/resnet-ddp:v4",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("launched Job resnet-ddp (attempt 1)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("headless Service resnet-ddp-workers"),
        "{stdout}"
    );
    let job = json_of(&jobs.get("resnet-ddp").await.unwrap());
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(
        (spec["completions"].clone(), spec["parallelism"].clone()),
        (json!(4), json!(4))
    );
    assert_eq!(spec["activeDeadlineSeconds"], 86400);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["subdomain"], "resnet-ddp-workers");
    assert_eq!(
        pod["nodeSelector"]["cloud.google.com/gke-accelerator"],
        "nvidia-tesla-t4"
    );
    assert_eq!(pod["tolerations"][0]["key"], "nvidia.com/gpu");
    let container = &pod["containers"][0];
    assert_eq!(container["image"], "gcr.io/my-project/resnet-ddp:v4");
    assert_eq!(container["command"], json!(["python", "train.py"]));
    assert_eq!(container["resources"]["limits"]["nvidia.com/gpu"], "1");
    assert_eq!(container["resources"]["requests"]["memory"], "12Gi");
    let env = env_of(&job);
    for var in [
        json!({"name": "WORLD_SIZE", "value": "4"}),
        json!({"name": "MASTER_ADDR", "value": "resnet-ddp-0.resnet-ddp-workers"}),
        json!({"name": "MASTER_PORT", "value": "29500"}),
        json!({"name": "NCCL_DEBUG", "value": "WARN"}),
    ] {
        assert!(env.contains(&var), "{var} in {env:?}");
    }
    let services: Api<Service> = Api::default_namespaced(client.clone());
    assert!(
        services
            .get_opt("resnet-ddp-workers")
            .await
            .unwrap()
            .is_some()
    );

    // kubectl's own skeleton: no labels of its own, the API server's backoffLimit, the flags'
    // resources and env; its logs are read from its container.
    let dry_run = repo_path("tests/job_manifests/valid/kubectl-dry-run.yaml");
    let dry_run = dry_run.to_str().unwrap();
    let out = e
        .gantry(&[
            "--job-manifest",
            dry_run,
            "launch",
            "--memory",
            "2Gi",
            "--cpu",
            "500m",
            "--env",
            "SIM_LOG_LINES=3",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let job = json_of(&jobs.get("train").await.unwrap());
    assert_eq!(job["spec"]["backoffLimit"], 6);
    let labels = job["spec"]["template"]["metadata"]["labels"]
        .as_object()
        .unwrap()
        .clone();
    let mut keys: Vec<&str> = labels.keys().map(String::as_str).collect();
    keys.retain(|k| !k.contains("controller-uid") && !k.contains("job-name"));
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "app.kubernetes.io/managed-by",
            "gantry.dev/attempt",
            "gantry.dev/job",
            "gantry.dev/run"
        ]
    );
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["name"], "train");
    assert_eq!(container["image"], "busybox");
    assert_eq!(
        container["resources"],
        json!({"requests": {"cpu": "500m", "memory": "2Gi"}, "limits": {"memory": "2Gi"}})
    );
    let out = e
        .gantry(&["--job-manifest", dry_run, "logs", "--follow"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).lines().count(),
        3,
        "{}",
        text(&out.stdout)
    );
    drop(e.cloud);
}
