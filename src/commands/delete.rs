//! `gantry delete job [--yes]`: every attempt and the workers' Service;
//! `gantry delete attempt NAME [--yes]`: one attempt.

use std::io::IsTerminal;

use crate::cli::{DeleteArgs, DeleteWhat};
use crate::k8s;
use crate::settings::Settings;

use super::connect::{connect, fail, job_error};

pub async fn run(args: DeleteArgs, settings: &Settings) -> i32 {
    let (name, yes) = match args.what {
        DeleteWhat::Job {
            name: Some(name), ..
        } => {
            return fail(
                &format!(
                    "`gantry delete job` deletes every attempt; to delete only {name}, run `gantry delete attempt {name}`"
                ),
                2,
            );
        }
        DeleteWhat::Job { name: None, yes } => (None, yes),
        DeleteWhat::Attempt { name, yes } => (Some(name), yes),
    };
    let t = match connect(settings).await {
        Ok(t) => t,
        Err(code) => return code,
    };
    let what = match &name {
        Some(n) => format!("attempt {n} (its Job and pods)"),
        None => format!(
            "every attempt of Job {} with its pods, and its Service",
            t.config.job.name
        ),
    };
    if !yes {
        if !std::io::stdin().is_terminal() {
            return fail(
                &format!(
                    "not deleting {what}: stdin is not a terminal to ask on; pass --yes to delete without asking"
                ),
                2,
            );
        }
        let question = format!("Delete {what}? [y/N] ");
        match tokio::task::spawn_blocking(move || crate::output::ask(&question)).await {
            Ok(true) => {}
            _ => {
                crate::outln!("not deleted");
                return 0;
            }
        }
    }
    match k8s::delete(
        &t.client,
        &t.config.job,
        name.as_deref(),
        &crate::engine::Principal::local().name(),
    )
    .await
    {
        Ok(d) if d.jobs.is_empty() && d.services.is_empty() => {
            crate::outln!(
                "nothing to delete: no Job made by Gantry for {}",
                t.config.job.name
            );
            0
        }
        Ok(d) => {
            for j in &d.jobs {
                crate::outln!("deleted Job {j}");
            }
            for s in &d.services {
                crate::outln!("deleted Service {s}");
            }
            0
        }
        Err(e) => job_error(&e),
    }
}
