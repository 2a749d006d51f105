//! `gantry launch`: the next attempt of the training Job from the configuration and flags.

use super::connect::{connect, job_error};
use crate::cli::LaunchArgs;
use crate::k8s::{self, manifest};
use crate::settings::Settings;

pub async fn run(args: LaunchArgs, settings: &Settings) -> i32 {
    let mut t = match connect(settings).await {
        Ok(t) => t,
        Err(code) => return code,
    };
    manifest::LaunchFlags::from(&args).apply(&mut t.config.job);
    match k8s::launch(&t.client, &t.config.job, t.project.as_deref()).await {
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
    crate::outln!("follow it with `gantry logs --follow`");
}
