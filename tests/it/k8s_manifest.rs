//! Manifests from the configuration: the seed's defaults, distributed training, validation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry::config::JobConfig;
use gantry::k8s::manifest::Overrides;
use gantry::k8s::manifest::{self, ManifestError};

#[test]
fn the_seed_job() {
    let job = manifest::training_job(&JobConfig::default(), Some("p"), 1).unwrap();
    assert_eq!(job.metadata.name.as_deref(), Some("ml-training-job"));
    let labels = job.metadata.labels.clone().unwrap();
    assert_eq!(labels["job"], "ml-training");
    assert_eq!(labels["app.kubernetes.io/managed-by"], "gantry");
    assert_eq!(labels["gantry.dev/attempt"], "1");
    let spec = job.spec.unwrap();
    assert_eq!(spec.backoff_limit, Some(2));
    assert_eq!(spec.completion_mode, None);
    let pod = spec.template.spec.unwrap();
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    assert_eq!(
        pod.containers[0].image.as_deref(),
        Some("gcr.io/p/ml-training-job:latest")
    );
    assert_eq!(
        manifest::training_job(&JobConfig::default(), None, 1).unwrap_err(),
        ManifestError::NoImage
    );
    let second = manifest::training_job(&JobConfig::default(), Some("p"), 2).unwrap();
    assert_eq!(second.metadata.name.as_deref(), Some("ml-training-job-2"));
}

#[test]
fn distributed_training_env_and_service() {
    let mut cfg = JobConfig::default();
    manifest::apply_launch_flags(&mut cfg, &Overrides::default(), Some(4), None, true);
    cfg.resources.gpus = Some(1);
    let job = manifest::training_job(&cfg, Some("p"), 3).unwrap();
    let spec = job.spec.unwrap();
    assert_eq!((spec.parallelism, spec.completions), (Some(4), Some(4)));
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    let pod = spec.template.spec.unwrap();
    assert_eq!(pod.subdomain.as_deref(), Some("ml-training-job-workers"));
    assert_eq!(
        pod.tolerations.unwrap()[0].key.as_deref(),
        Some("nvidia.com/gpu")
    );
    let env = pod.containers[0].env.clone().unwrap();
    let rank = env.iter().find(|e| e.name == "RANK").unwrap();
    assert_eq!(
        rank.value_from
            .as_ref()
            .unwrap()
            .field_ref
            .as_ref()
            .unwrap()
            .field_path,
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );
    let addr = env.iter().find(|e| e.name == "MASTER_ADDR").unwrap();
    assert_eq!(
        addr.value.as_deref(),
        Some("ml-training-job-3-0.ml-training-job-workers")
    );
    let svc = manifest::worker_service(&cfg, 3).unwrap().unwrap();
    let svc_spec = svc.spec.unwrap();
    assert_eq!(svc_spec.cluster_ip.as_deref(), Some("None"));
    assert_eq!(svc_spec.ports.unwrap()[0].port, 29500);

    // A retry of it re-points MASTER_ADDR at the new attempt's rank 0, and runs though the
    // attempt it follows was suspended (its run ended by Gantry).
    let mut first = manifest::training_job(&cfg, Some("p"), 1).unwrap();
    first.spec.as_mut().unwrap().suspend = Some(true);
    let next = manifest::next_attempt(
        &first,
        "ml-training-job",
        2,
        &Overrides {
            memory: Some("8Gi".into()),
            env: vec![("EPOCHS".into(), "10".into())],
            ..Default::default()
        },
    )
    .unwrap();
    let spec = next.spec.unwrap();
    assert_eq!(spec.suspend, None);
    let c = &spec.template.spec.unwrap().containers[0];
    let env = c.env.clone().unwrap();
    let value = |k: &str| {
        env.iter()
            .find(|e| e.name == k)
            .and_then(|e| e.value.clone())
    };
    assert_eq!(
        value("MASTER_ADDR").as_deref(),
        Some("ml-training-job-2-0.ml-training-job-workers")
    );
    assert_eq!(value("EPOCHS").as_deref(), Some("10"));
    assert_eq!(
        c.resources.clone().unwrap().limits.unwrap()["memory"].0,
        "8Gi"
    );
}

#[test]
fn bad_input_is_refused_before_anything_is_sent() {
    let mut cfg = JobConfig::default();
    cfg.env.insert("1BAD".into(), "x".into());
    assert!(manifest::training_job(&cfg, Some("p"), 1).is_err());
    let mut cfg = JobConfig::default();
    cfg.resources.memory = Some("lots".into());
    let e = manifest::training_job(&cfg, Some("p"), 1).unwrap_err();
    assert!(e.to_string().contains("not a quantity"), "{e}");
    let cfg = JobConfig {
        name: "a".repeat(62),
        ..Default::default()
    };
    assert!(manifest::training_job(&cfg, Some("p"), 1).is_ok());
    let e = manifest::training_job(&cfg, Some("p"), 2).unwrap_err();
    assert!(e.to_string().contains("RFC 1123"), "{e}");
    for q in ["500m", "2", "8Gi", "1.5", "1e3"] {
        assert!(manifest::is_quantity(q), "{q}");
    }
    for q in ["", "Gi", "8GB", "1..2"] {
        assert!(!manifest::is_quantity(q), "{q}");
    }
}
