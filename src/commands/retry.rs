//! `gantry retry`: a new attempt of the training Job with the previous attempt's spec and the
//! given overrides; the old attempt stays for its logs.

use crate::cli::RetryArgs;
use crate::k8s;
use crate::settings::Settings;

use super::connect::{connect, job_error};
use super::launch::print_launched;

pub async fn run(args: RetryArgs, settings: &Settings) -> i32 {
    let t = match connect(settings).await {
        Ok(t) => t,
        Err(code) => return code,
    };
    match k8s::retry(&t.client, &t.config.job, &(&args.overrides).into()).await {
        Ok(l) => {
            print_launched("started", &l);
            0
        }
        Err(e) => job_error(&e),
    }
}
