//! `gantry watcher ssh`: the in-cluster Gantry's TUI for anyone with cluster credentials and an
//! authorized key. A local port (loopback only) is forwarded through the Kubernetes API
//! (`pods/portforward`, one stream per connection) to the watcher pod's SSH port, and the
//! user's own `ssh` runs against it with the host key pinned: `HostKeyAlias` names the watcher
//! (not the random port), and a known_hosts file of Gantry's own holds the key the Deployment
//! carries — so no `known_hosts` line per port, and no trust-on-first-use prompt.

use std::path::PathBuf;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::connect::{JobTarget, fail};
use crate::cli::WatcherSshArgs;

/// The ssh program (another can be named, as git's `GIT_SSH`).
const SSH_ENV: &str = "GANTRY_SSH";

pub async fn run(args: WatcherSshArgs, target: &JobTarget) -> i32 {
    let config = &target.config;
    let namespace = crate::watcher::namespace(config);
    let job = &config.job.name;
    let name = crate::watcher::name(job);
    let found = match crate::watcher::status::status(
        &target.client,
        &namespace,
        job,
        &config.job.namespace,
    )
    .await
    {
        Ok(s) => s,
        Err(e) => return fail(&e, e.exit_code()),
    };
    if !found.installed {
        return fail(
            &format!(
                "no watcher in namespace {namespace}: gantry watcher install (with [watcher] serve = true)"
            ),
            2,
        );
    }
    let deployments: Api<Deployment> = Api::namespaced(target.client.clone(), &namespace);
    let host_key = match deployments.get_opt(&name).await {
        Ok(d) => d
            .and_then(|d| d.metadata.annotations)
            .and_then(|a| a.get(crate::watcher::HOST_KEY_ANNOTATION).cloned()),
        Err(e) => return fail(&format!("reading Deployment {name}: {e}"), 1),
    };
    let Some(host_key) = host_key else {
        return fail(
            &format!(
                "the watcher {name} serves no SSH: set [watcher] serve = true and run gantry watcher install again"
            ),
            2,
        );
    };
    let (Some(pod), true) = (found.pod.clone(), found.ready) else {
        return fail(
            &format!("the watcher {name} has no ready pod yet: see `gantry watcher status`"),
            1,
        );
    };
    let alias = format!("gantry-watcher.{namespace}.{job}");
    let known_hosts = match write_known_hosts(&alias, &host_key) {
        Ok(p) => p,
        Err(e) => return fail(&format!("writing the pinned host key: {e}"), 1),
    };
    let listener = match TcpListener::bind(("127.0.0.1", args.local_port)).await {
        Ok(l) => l,
        Err(e) => return fail(&format!("127.0.0.1:{}: {e}", args.local_port), 2),
    };
    let port = match listener.local_addr() {
        Ok(a) => a.port(),
        Err(e) => return fail(&e, 1),
    };
    let stop = CancellationToken::new();
    let pods: Api<Pod> = Api::namespaced(target.client.clone(), &namespace);
    tokio::spawn(forward(listener, pods, pod.clone(), stop.clone()));
    crate::errln!("gantry watcher ssh: pod {pod} through 127.0.0.1:{port}");
    let program = std::env::var(SSH_ENV).unwrap_or_else(|_| "ssh".into());
    let mut ssh = tokio::process::Command::new(&program);
    ssh.args(["-p", &port.to_string()])
        .args(["-o", &format!("HostKeyAlias={alias}")])
        .args([
            "-o",
            &format!("UserKnownHostsFile={}", known_hosts.display()),
        ])
        .args(["-o", "StrictHostKeyChecking=yes"])
        .args(["-o", "CheckHostIP=no"])
        .arg("-t")
        .args(&args.ssh_args)
        .arg("127.0.0.1");
    let code = match ssh.status().await {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => fail(
            &format!("{program}: {e} (install the OpenSSH client, or name one with {SSH_ENV})"),
            2,
        ),
    };
    stop.cancel();
    code
}

/// Accepts local connections until `stop`, each forwarded to the pod's SSH port.
async fn forward(listener: TcpListener, pods: Api<Pod>, pod: String, stop: CancellationToken) {
    loop {
        let (mut local, _) = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(_) => continue,
            },
        };
        let (pods, pod, stop) = (pods.clone(), pod.clone(), stop.clone());
        tokio::spawn(async move {
            let port = crate::watcher::SSH_PORT;
            let mut forwarder = match pods.portforward(&pod, &[port]).await {
                Ok(f) => f,
                Err(e) => {
                    crate::errln!("gantry watcher ssh: port-forward to {pod}: {e}");
                    return;
                }
            };
            let Some(mut remote) = forwarder.take_stream(port) else {
                return;
            };
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = tokio::io::copy_bidirectional(&mut local, &mut remote) => {}
            }
            drop(remote);
            let _ = forwarder.join().await;
        });
    }
}

/// A known_hosts file of Gantry's own (0600, in the state directory) holding only the
/// watcher's key under its alias.
fn write_known_hosts(alias: &str, key: &str) -> std::io::Result<PathBuf> {
    let dir = crate::paths::state_dir()
        .ok_or_else(|| std::io::Error::other("no state directory (HOME unset)"))?;
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("watcher_known_hosts");
    let line = format!("{alias} {}\n", crate::sanitize::one_line(key.trim()));
    crate::private_file::write_private(&path, line.as_bytes())?;
    Ok(path)
}
