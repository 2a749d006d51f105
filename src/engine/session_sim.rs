//! A session on the embedded simulated cloud (`--sim`): the simulator started in this process,
//! on loopback, and reached exactly as Google is — the Container API at its endpoint with a
//! token file — so nothing past here knows it is not Google.

use color_eyre::eyre::{Result, eyre};

use super::session::{Session, SessionOptions};
use crate::config::Config;

#[cfg(feature = "sim")]
pub async fn open(options: &SessionOptions, config: Config) -> Result<Session> {
    use super::TargetInfo;
    use super::session::Backend;
    use crate::gke::{Auth, ClusterRef, Gke, PollPolicy, RequestRetry};
    use crate::simulated::{DEMO_LOCATION, DEMO_PROJECT, SimCloud, SimOptions};
    use color_eyre::eyre::WrapErr;
    use std::sync::Arc;
    let read_only = options.read_only;
    let base = crate::paths::state_dir()
        .ok_or_else(|| eyre!("no state directory: set HOME or XDG_STATE_HOME"))?;
    let dir = base.join("sim").join(std::process::id().to_string());
    let cloud = SimCloud::start(SimOptions {
        state_dir: Some(dir.clone()),
        time_scale: options.time_scale,
        faults: options.faults.clone(),
        replay_dir: options.replay_dir.clone(),
        run_images: crate::simulated::with_own_image(options.run_images.clone()),
        run_code: options.run_code,
        ..Default::default()
    })
    .await
    .wrap_err("could not start the simulated cloud")?;
    let auth = Auth::token_file(&dir.join("token")).map_err(|e| eyre!("{e}"))?;
    // The simulator answers fast and never throttles for real: poll it at its own pace.
    let factor = options.time_scale.clamp(0.001, 1.0);
    let gke = Gke::connect(auth, Some(cloud.gke_endpoint()))
        .await
        .map_err(|e| eyre!("{e}"))?
        .with_retry(RequestRetry::scaled(factor));
    // The project and location the operator named (flag, then config), so a rehearsal on the
    // simulator looks like the real thing; else the simulator's own.
    let (project, location) = crate::gke::target::named_place(&options.target.named, &config);
    let project = project.unwrap_or_else(|| DEMO_PROJECT.to_string());
    let location = location.unwrap_or_else(|| DEMO_LOCATION.to_string());
    let target = ClusterRef::new(&project, &location, &config.cluster.name);
    let info = TargetInfo {
        place: format!("{project}/{location}"),
        cluster: config.cluster.name.clone(),
        managed: true,
        unmanaged_reason: None,
        simulated: true,
    };
    Ok(Session {
        backend: Backend::Gke {
            gke: Arc::new(gke),
            target,
            poll: PollPolicy::scaled(factor),
            in_cluster: None,
        },
        config,
        info,
        // The simulator keeps its own kubeconfig in its state directory.
        kubeconfig: None,
        logs_root: options.logs_root.clone(),
        saves_logs: true,
        _sim: Some(Box::new(cloud)),
        sim_dir: Some(dir),
        read_only,
        audit: super::session::audit_of(options),
        in_cluster: false,
        clock: options.clock,
    })
}

#[cfg(not(feature = "sim"))]
pub async fn open(_options: &SessionOptions, _config: Config) -> Result<Session> {
    Err(eyre!("--sim: {}", crate::simulated::MISSING))
}
