//! Code without an image, end to end: `gantry launch --code DIR -- CMD…` through the real binary
//! against the simulated cluster, and what kubectl reads back of it — the attempt's ConfigMap,
//! unpacked as the container unpacks it; the attempt's record in `gantry status --json`; a retry
//! that keeps its code; `gantry code` writing it back; and what is refused before anything is
//! made.

mod launch;
mod recovery;
mod refusals;
mod run_code;

use std::path::Path;
use std::process::Command;

use gantry_test_support::CliEnv;

/// `kubectl ARGS` against the environment's cluster; its stdout, the test failing on an error.
pub fn kubectl(e: &CliEnv, args: &[&str]) -> Vec<u8> {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(e.home.path().join("sim/kubeconfig"))
        .args(args)
        .env("KUBECACHEDIR", e.home.path().join("kube-cache"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The archive in an attempt's ConfigMap, read with kubectl, unpacked into `into` by `tar` with
/// the init container's own command (`code::mount::unpack_command`), paths made local.
pub fn unpack_configmap(e: &CliEnv, attempt: &str, into: &Path) {
    use base64::Engine;
    let configmap = gantry::code::mount::configmap_name(attempt);
    let encoded = kubectl(
        e,
        &[
            "get",
            "configmap",
            &configmap,
            "-o",
            "jsonpath={.binaryData.code\\.tar}",
        ],
    );
    let archive = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim_ascii())
        .unwrap();
    let file = into.with_extension("tar");
    std::fs::write(&file, archive).unwrap();
    std::fs::create_dir_all(into).unwrap();
    let archive_path = format!(
        "{}/{}",
        gantry::code::mount::ARCHIVE_DIR,
        gantry::code::mount::KEY
    );
    let command: Vec<String> = gantry::code::mount::unpack_command()
        .into_iter()
        .map(|word| {
            if word == archive_path {
                file.display().to_string()
            } else if word == gantry::code::mount::WORKDIR {
                into.display().to_string()
            } else {
                word
            }
        })
        .collect();
    let status = Command::new(&command[0])
        .args(&command[1..])
        .status()
        .unwrap();
    assert!(status.success(), "{command:?}");
}

/// The Jobs and ConfigMaps Gantry made in the cluster, by name.
pub async fn made(e: &CliEnv) -> Vec<String> {
    use k8s_openapi::api::batch::v1::Job;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, ListParams};
    let client = gantry_test_support::kube_client(&e.cloud);
    let mine = ListParams::default().labels("app.kubernetes.io/managed-by=gantry");
    let jobs: Api<Job> = Api::namespaced(client.clone(), "default");
    let configmaps: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut names: Vec<String> = jobs
        .list(&mine)
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|j| j.metadata.name.map(|n| format!("job/{n}")))
        .collect();
    names.extend(
        configmaps
            .list(&mine)
            .await
            .unwrap()
            .items
            .into_iter()
            .filter_map(|c| c.metadata.name.map(|n| format!("configmap/{n}"))),
    );
    names
}
