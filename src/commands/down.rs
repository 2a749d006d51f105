//! `gantry down [--yes]`: delete the training cluster, following the operation to its end.

use std::io::IsTerminal;

use tokio::sync::mpsc::unbounded_channel;

use super::connect::{Prepared, fail, prepare};
use super::up_progress::print_events;
use crate::cli::YesArgs;
use crate::gke::{self, DownOutcome, PollPolicy};
use crate::settings::Settings;

pub async fn run(args: YesArgs, settings: &Settings) -> i32 {
    let Prepared { cluster, gke, .. } = match prepare(settings).await {
        Ok(p) => p,
        Err(code) => return code,
    };
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            crate::errln!(
                "gantry: not deleting cluster {cluster}: stdin is not a terminal to ask on; pass --yes to delete without asking"
            );
            return 2;
        }
        let question =
            format!("Delete cluster {cluster}, its nodes and everything running on them? [y/N] ");
        match tokio::task::spawn_blocking(move || crate::output::ask(&question)).await {
            Ok(true) => {}
            _ => {
                crate::outln!("not deleted");
                return 0;
            }
        }
    }
    let (tx, rx) = unbounded_channel();
    let gke = gke.with_events(tx.clone());
    let printer = tokio::spawn(print_events(rx));
    let result = gke::down(&gke, &cluster, PollPolicy::default(), &tx).await;
    drop((tx, gke));
    let _ = printer.await;
    match result {
        Ok(DownOutcome::Deleted) => {
            crate::outln!("cluster {cluster} deleted");
            0
        }
        Ok(DownOutcome::NotFound) => {
            crate::outln!("cluster {cluster} does not exist (nothing to delete)");
            0
        }
        Err(e) => fail(&e, e.exit_code()),
    }
}
