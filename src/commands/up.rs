//! `gantry up [--wait] [--yes]`: create the training cluster (or adopt the one there), and with
//! `--wait` print progress lines until it is RUNNING. A running cluster that differs from the
//! config is changed to match, once the operator has seen the plan and said yes
//! ([`super::up_apply`]). With `[watcher] in-cluster = true` the watcher is made once the cluster
//! runs ([`super::up_watcher`]).

use tokio::sync::mpsc::unbounded_channel;

use super::connect::{Prepared, fail, prepare};
use super::up_progress::{print_events, write_kubeconfig};
use super::up_watcher;
use crate::cli::UpArgs;
use crate::gke::{self, Begun, OperationKind, PollPolicy, UpHow, spec};
use crate::settings::Settings;

pub async fn run(args: UpArgs, settings: &Settings) -> i32 {
    let target = settings.target();
    let Prepared {
        config,
        cluster,
        gke,
    } = match prepare(settings).await {
        Ok(p) => p,
        Err(code) => return code,
    };
    match super::up_apply::drifted(&gke, &cluster, &config).await {
        Err(code) => return code,
        Ok(Some(plan)) => {
            let watcher = match up_watcher::planned(settings, &gke, &cluster, &config).await {
                Ok(w) => w,
                Err(code) => return code,
            };
            let applied = super::up_apply::run(
                &args,
                target,
                gke.clone(),
                &cluster,
                &config.cluster,
                (&plan, watcher.as_ref()),
            )
            .await;
            return match applied {
                Ok(code) => {
                    up_watcher::after_up(settings, &gke, &cluster, &config, args.wait, code).await
                }
                Err(code) => code,
            };
        }
        Ok(None) => {}
    }
    let plain = gke.clone();
    let (tx, rx) = unbounded_channel();
    let gke = gke.with_events(tx.clone());
    let printer = tokio::spawn(print_events(rx));
    if args.wait {
        let result = gke::up(&gke, &cluster, &config.cluster, PollPolicy::default(), &tx).await;
        // The CA for the kubeconfig comes with the full cluster, read while the client is here.
        let running = match &result {
            Ok(_) => gke.get_cluster(&cluster).await.ok().flatten(),
            Err(_) => None,
        };
        drop((tx, gke));
        let _ = printer.await;
        match result {
            Ok(outcome) => {
                let how = match outcome.how {
                    UpHow::Created => "created",
                    UpHow::Adopted => "already there",
                    UpHow::Resumed => "created (picked up the running operation)",
                };
                crate::outln!(
                    "cluster {} is RUNNING ({how}): {} nodes of {}, version {}, endpoint {}",
                    cluster,
                    outcome.cluster.node_count,
                    outcome.cluster.machine_type,
                    outcome.cluster.version,
                    outcome.cluster.endpoint
                );
                let code = match running {
                    Some(c) => write_kubeconfig(target, &cluster, &c),
                    None => 0,
                };
                up_watcher::after_up(settings, &plain, &cluster, &config, true, code).await
            }
            Err(e) => fail(&e, e.exit_code()),
        }
    } else {
        let result = match spec::cluster_request(&config.cluster) {
            Ok(request) => gke::begin_up(&gke, &cluster, &request, &tx).await,
            Err(e) => Err(e),
        };
        drop((tx, gke));
        let _ = printer.await;
        match result {
            Ok(Begun::Running(_)) => {
                crate::outln!("cluster {cluster} is there already");
                up_watcher::after_up(settings, &plain, &cluster, &config, false, 0).await
            }
            Ok(Begun::Operation {
                kind: OperationKind::Create,
                name,
                ..
            }) => {
                crate::outln!(
                    "GKE is creating cluster {cluster} (operation {name}); `gantry up --wait` follows it, `gantry status` shows it"
                );
                up_watcher::after_up(settings, &plain, &cluster, &config, false, 0).await
            }
            Ok(Begun::Operation { name, .. }) => {
                crate::errln!(
                    "gantry: cluster {cluster} is being deleted (operation {name}); run `gantry up --wait` to create it again once it is gone"
                );
                1
            }
            Err(e) => fail(&e, e.exit_code()),
        }
    }
}
