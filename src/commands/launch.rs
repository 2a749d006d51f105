//! `gantry launch`: the next attempt of the training Job from the configuration and flags; with
//! code (`--code DIR`, `[job] code`), what goes is read and said before anything is made.

use super::connect::{connect, job_error};
use crate::cli::LaunchCommand;
use crate::k8s::{self, K8sError, manifest};
use crate::settings::Settings;

pub async fn run(args: LaunchCommand, settings: &Settings) -> i32 {
    let mut job = settings.config.job.clone();
    manifest::LaunchFlags::from(&args).apply(&mut job);
    let code = match job.code.as_deref().map(crate::code::pack).transpose() {
        Ok(code) => code,
        Err(e) => return job_error(&K8sError::from(e)),
    };
    if let Some(code) = &code {
        crate::outln!("{}", code.summary());
        if job.image.is_none() {
            crate::outln!(
                "image: {} (Docker Hub's official Python image; --image or job.image for another)",
                crate::code::DEFAULT_IMAGE
            );
        }
    }
    let mut t = match connect(settings).await {
        Ok(t) => t,
        Err(code) => return code,
    };
    t.config.job = job;
    let launched = k8s::launch::launch_packed(
        &t.client,
        &t.config.job,
        t.project.as_deref(),
        code.as_ref(),
    )
    .await;
    match launched {
        Ok(l) => {
            print_launched("launched", &l);
            0
        }
        Err(e) => job_error(&e),
    }
}

pub(super) fn print_launched(verb: &str, l: &k8s::Launched) {
    crate::outln!("{verb} Job {} (attempt {})", l.job, l.attempt);
    if let Some(s) = &l.service {
        crate::outln!("workers reach each other through headless Service {s}");
    }
    if let Some(note) = l.note {
        crate::outln!("note: {note}");
    }
    if let Some(code) = &l.code {
        crate::outln!(
            "code {} in ConfigMap {}",
            code.said(),
            crate::code::mount::configmap_name(&l.job)
        );
    }
    crate::outln!("follow it with `gantry logs --follow`");
}
