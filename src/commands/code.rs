//! `gantry code ATTEMPT DIR`: the code an attempt ran, written back out byte for byte from its
//! ConfigMap, and checked against the digest the attempt recorded.

use super::connect::{connect, job_error};
use crate::cli::CodeArgs;
use crate::code::{self, record};
use crate::k8s::{self, K8sError};
use crate::settings::Settings;

pub async fn run(args: CodeArgs, settings: &Settings) -> i32 {
    let t = match connect(settings).await {
        Ok(t) => t,
        Err(code) => return code,
    };
    let (recorded, archive) =
        match k8s::code::of_attempt(&t.client, &t.config.job, &args.attempt).await {
            Ok(found) => found,
            Err(e) => return job_error(&e),
        };
    let files = match code::write_out(&archive, &args.dir) {
        Ok(files) => files,
        Err(e) => return job_error(&K8sError::from(e)),
    };
    let digest = code::digest::of(&files);
    let bytes = files.iter().map(code::files::CodeFile::size).sum();
    crate::outln!(
        "wrote the code of {} to {}: {}, {}",
        args.attempt,
        args.dir.display(),
        record::files_said(files.len() as u64),
        code::size_said(bytes)
    );
    if digest != recorded.digest {
        crate::errln!(
            "gantry: the files written have digest {digest}, but {} recorded {}: its ConfigMap was changed after it was made",
            args.attempt,
            recorded.digest
        );
        return 1;
    }
    crate::outln!("digest {digest}, as {} recorded", args.attempt);
    0
}
