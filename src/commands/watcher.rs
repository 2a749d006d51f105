//! `gantry watcher install | status | uninstall | ssh`: Gantry itself in the cluster
//! (`crate::watcher` says what it is made of). Install carries the settings resolved here — the
//! project and location included — so the watcher works on what this Gantry would.

use std::io::IsTerminal;
use std::time::Duration;

use super::connect::{JobTarget, connect, fail};
use crate::cli::{StatusArgs, WatcherArgs, WatcherInstallArgs, WatcherUninstallArgs, WatcherWhat};
use crate::settings::Settings;
use crate::watcher::desired::Desired;
use crate::watcher::error::WatcherError;
use crate::watcher::{install, status, uninstall};

/// How long `install --wait` waits for the pod to be ready.
const READY_WITHIN: Duration = Duration::from_secs(300);

pub async fn run(args: WatcherArgs, settings: &Settings) -> i32 {
    let target = match connect(settings).await {
        Ok(t) => t,
        Err(code) => return code,
    };
    match args.what {
        WatcherWhat::Install(a) => run_install(a, settings, &target).await,
        WatcherWhat::Status(a) => run_status(&a, &target).await,
        WatcherWhat::Uninstall(a) => run_uninstall(&a, &target).await,
        WatcherWhat::Ssh(a) => super::watcher_ssh::run(a, &target).await,
    }
}

fn said(e: &WatcherError) -> i32 {
    fail(e, e.exit_code())
}

async fn run_install(args: WatcherInstallArgs, settings: &Settings, target: &JobTarget) -> i32 {
    let mut config = target.config.clone();
    let Some(image) = args.watcher_image.or_else(|| config.watcher.image.clone()) else {
        crate::errln!(
            "gantry: no image for the watcher: build one from this repository's Dockerfile (`gcloud builds submit --tag us-docker.pkg.dev/PROJECT/REPO/gantry:{v}`, or `docker build -t IMAGE . && docker push IMAGE`), then pass --watcher-image IMAGE or set [watcher] image (README \"Gantry in the cluster\")",
            v = crate::watcher::VERSION
        );
        return 2;
    };
    if image.trim().is_empty() || image.contains(char::is_whitespace) {
        crate::errln!(
            "gantry: '{}' is not an image: give one such as us-docker.pkg.dev/PROJECT/REPO/gantry:{}",
            crate::sanitize::one_line(&image),
            crate::watcher::VERSION
        );
        return 2;
    }
    // What the watcher is to work on, as this Gantry resolved it.
    let cluster = crate::connect::cluster_ref(settings.target(), &config).ok();
    if let Some(c) = &cluster {
        config.project = Some(c.project.clone());
        config.location = Some(c.location.clone());
    }
    let desired = match Desired::of(&config, &image, settings.target().gke_endpoint.clone()) {
        Ok(d) => d,
        Err(e) => return fail(&e, 2),
    };
    let (plan, keys) = (desired.plan, desired.keys);
    if config.watcher.serve && keys.authorized.trim().is_empty() && keys.operators.trim().is_empty()
    {
        crate::errln!(
            "gantry: warning: [watcher] serve = true and no key may connect: add public keys to [watcher] authorized-keys (or gantry serve's authorized_keys) and install again"
        );
    }
    let installed = match install::install(&target.client, plan.clone(), &keys).await {
        Ok(i) => i,
        Err(e) => return said(&e),
    };
    let iam = cluster
        .as_ref()
        .map(|c| {
            install::iam_commands(
                &c.project,
                &plan.namespace,
                &plan.job,
                config.watcher.google_service_account.as_deref(),
            )
        })
        .unwrap_or_default();
    if args.json {
        let object = serde_json::json!({
            "objects": installed.objects,
            "hostKeyFingerprint": installed.host_key_fingerprint,
            "iamCommands": iam,
        });
        crate::outln!("{object}");
    } else {
        let kinds: Vec<String> = install::kinds(&installed.objects)
            .into_iter()
            .map(|(kind, n)| {
                if n == 1 {
                    kind.to_string()
                } else {
                    format!("{n} {kind}s")
                }
            })
            .collect();
        crate::outln!(
            "watcher {} installed in namespace {} ({}), image {image}",
            crate::watcher::name(&plan.job),
            plan.namespace,
            kinds.join(", ")
        );
        if let Some(fp) = &installed.host_key_fingerprint {
            crate::outln!("its SSH host key: {fp} (`gantry watcher ssh` pins it)");
        }
        if !iam.is_empty() {
            crate::outln!(
                "\nUntil its Google service account is granted, the watcher cannot: {}. Grant it with:",
                crate::watcher::NEEDS_GKE.join(", ")
            );
            for command in &iam {
                crate::outln!("  {command}");
            }
            crate::outln!("(`gantry watcher status` says what it can do from inside.)");
        }
    }
    if args.wait {
        return wait_ready(
            &target.client,
            &plan.namespace,
            &plan.job,
            &target.config.job.namespace,
            READY_WITHIN,
        )
        .await;
    }
    0
}

/// Waits for the watcher's pod to be ready, at most `within`; the exit code.
pub(super) async fn wait_ready(
    client: &kube::Client,
    namespace: &str,
    job: &str,
    job_namespace: &str,
    within: Duration,
) -> i32 {
    use k8s_openapi::api::apps::v1::Deployment;
    let name = crate::watcher::name(job);
    let deployments: kube::Api<Deployment> = kube::Api::namespaced(client.clone(), namespace);
    let ready = |d: Option<&Deployment>| {
        d.and_then(|d| d.status.as_ref()).is_some_and(|s| {
            s.ready_replicas.unwrap_or(0) > 0 && s.updated_replicas.unwrap_or(0) > 0
        })
    };
    let waited = tokio::time::timeout(
        within,
        kube::runtime::wait::await_condition(deployments, &name, ready),
    )
    .await;
    match waited {
        Ok(Ok(_)) => {
            let pod = status::status(client, namespace, job, job_namespace)
                .await
                .ok()
                .and_then(|s| s.pod);
            crate::outln!("watcher ready: pod {}", pod.as_deref().unwrap_or("?"));
            0
        }
        Ok(Err(e)) => fail(&format!("waiting for the watcher: {e}"), 1),
        Err(_) => {
            crate::errln!(
                "gantry: the watcher is not ready after {} minutes: see `kubectl -n {namespace} describe deployment {name}` and its pod's log",
                within.as_secs() / 60
            );
            1
        }
    }
}

async fn run_status(args: &StatusArgs, target: &JobTarget) -> i32 {
    let config = &target.config;
    let namespace = crate::watcher::namespace(config);
    match status::status(
        &target.client,
        &namespace,
        &config.job.name,
        &config.job.namespace,
    )
    .await
    {
        Ok(s) => {
            if args.json {
                crate::outln!("{}", serde_json::to_string(&s).unwrap_or_default());
            } else {
                for line in s.lines() {
                    crate::outln!("{line}");
                }
            }
            0
        }
        Err(e) => said(&e),
    }
}

async fn run_uninstall(args: &WatcherUninstallArgs, target: &JobTarget) -> i32 {
    let config = &target.config;
    let namespace = crate::watcher::namespace(config);
    let name = crate::watcher::name(&config.job.name);
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            crate::errln!(
                "gantry: not removing the watcher {name}: stdin is not a terminal to ask on; pass --yes to remove it without asking"
            );
            return 2;
        }
        let question = format!(
            "Remove the watcher {name} from namespace {namespace} (recovery, guards and messages stop with every laptop closed)? [y/N] "
        );
        match tokio::task::spawn_blocking(move || crate::output::ask(&question)).await {
            Ok(true) => {}
            _ => {
                crate::outln!("not removed");
                return 0;
            }
        }
    }
    match uninstall::uninstall(&target.client, &namespace, &config.job.name, args.force).await {
        Ok(removed) => {
            if removed.objects.is_empty() {
                crate::outln!("no watcher in namespace {namespace} (nothing to remove)");
            }
            for object in &removed.objects {
                crate::outln!("removed {object}");
            }
            if removed.pending_kept > 0 {
                crate::outln!(
                    "kept ConfigMap {}: {} message(s) still wait to be sent; `gantry watcher uninstall --force` removes it anyway (a local Gantry with the same targets sends them no more)",
                    crate::watcher::outbox_name(&config.job.name),
                    removed.pending_kept
                );
            }
            0
        }
        Err(e) => said(&e),
    }
}
