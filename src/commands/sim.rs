//! `gantry sim`: the simulated cloud in the foreground until SIGINT or SIGTERM.

use color_eyre::eyre::{Result, WrapErr};

use crate::cli::SimArgs;
use crate::simulated::{SimCloud, SimOptions};

/// `options` as [`crate::cli::sim_options`] fills them from the command line.
pub async fn run(args: &SimArgs, options: SimOptions) -> Result<i32> {
    let cloud = SimCloud::start(options)
        .await
        .wrap_err("could not start the simulated cloud")?;
    let dir = args.state_dir.display();
    crate::errln!("gantry sim: GKE API on {}", cloud.gke_endpoint());
    for image in cloud.shared().run_images.iter() {
        crate::errln!(
            "gantry sim: containers of images {} run as processes of {}",
            image.pattern,
            image.executable.display()
        );
    }
    if let Some(interpreter) = cloud.shared().run_images.code() {
        crate::errln!(
            "gantry sim: --run-code: code attempts run as processes of this machine's {}, not of their image",
            interpreter.said()
        );
    }
    crate::errln!("gantry sim: state in {dir} (endpoints.json, token, ca.pem, kubeconfig)");
    if !args.clusters.is_empty() {
        crate::errln!("gantry sim: try KUBECONFIG={dir}/kubeconfig kubectl get nodes");
    }
    wait_for_stop().await;
    cloud.shutdown();
    crate::errln!("gantry sim: stopped");
    Ok(0)
}

async fn wait_for_stop() {
    match super::stop_signals::StopSignals::listen() {
        Ok(mut signals) => signals.recv().await,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
