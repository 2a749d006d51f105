//! One-shot Job commands: launch, retry, delete an attempt or a pod. Each answers with `Done`.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams};

use super::Shared;
use crate::engine::{Command, Report};
use crate::k8s;

/// `by`: who asked, named on what is deleted.
pub async fn job_action(shared: Arc<Shared>, command: Command, by: String) {
    let client = shared.client().await;
    let what = command.describe();
    let Some(client) = client else {
        let _ = shared.tx.send(Report::Done {
            what,
            result: Err("not connected to the cluster".into()),
        });
        return;
    };
    let cfg = &shared.session.config.job;
    if matches!(command, Command::LaunchJob | Command::RetryJob)
        && let Err(e) = super::scale::back_before_launch(&shared).await
    {
        let _ = shared.tx.send(Report::Done {
            what,
            result: Err(e),
        });
        return;
    }
    let result = match command {
        Command::LaunchJob => k8s::launch(&client, cfg, shared.session.project())
            .await
            .map(|l| {
                let said = [
                    l.note.map(str::to_string),
                    l.code.map(|c| format!("code {}", c.said())),
                    (cfg.code.is_some() && cfg.image.is_none())
                        .then(|| format!("on {}", crate::code::DEFAULT_IMAGE)),
                ];
                match said.into_iter().flatten().collect::<Vec<_>>() {
                    said if said.is_empty() => format!("launched {}", l.job),
                    said => format!("launched {} ({})", l.job, said.join("; ")),
                }
            }),
        Command::RetryJob => k8s::retry(&client, cfg, &Default::default())
            .await
            .map(|l| format!("retrying as {}", l.job)),
        Command::Recover {
            attempt,
            why,
            ended_by,
            ..
        } => {
            let recovery = k8s::recover::Recovery {
                why: &why,
                ended_by,
                by: &by,
                pool: None,
            };
            k8s::recover::recover(&client, cfg, &attempt, recovery)
                .await
                .map(|l| format!("recovered: {attempt} ended, {} started", l.job))
        }
        Command::EndRun {
            attempt,
            why,
            ended_by,
        } => k8s::recover::end_run(&client, cfg, &attempt, &why, ended_by)
            .await
            .map(|_| format!("run ended at {attempt}: {why}")),
        Command::DeleteAttempt(name) => k8s::delete(&client, cfg, Some(&name), &by)
            .await
            .map(|_| format!("deleted {name}")),
        Command::DeletePod(name) => {
            let pods: Api<Pod> = Api::namespaced(client, &cfg.namespace);
            k8s::delete::mark_deleted_by(&pods, &name, &by).await;
            pods.delete(&name, &DeleteParams::background())
                .await
                .map(|_| format!("deleting pod {name}"))
                .map_err(k8s::K8sError::api(format!("delete pod {name}")))
        }
        _ => return,
    };
    let _ = shared.tx.send(Report::Done {
        what,
        result: result.map_err(|e| e.to_string()),
    });
}
