//! `gantry serve`: the engine of `gantry watch` and an SSH server in front of it, in the
//! foreground — under tmux or systemd. SIGTERM or Ctrl-C stop it: every viewer's screen is put
//! back, then the engine stops. Exit 0; 2 for what the operator must fix (a key file, an
//! address in use).

use tokio_util::sync::CancellationToken;

use super::stop_signals::StopSignals;
use crate::cli::ServeArgs;
use crate::engine::{Engine, open_session};
use crate::keys::Keymap;
use crate::serve::{ServeOptions, Server};
use crate::settings::Settings;
use crate::viewer::Pacing;

pub async fn run(args: ServeArgs, settings: Settings) -> i32 {
    let kept = settings.clone();
    let Settings {
        session: engine_options,
        config,
        max_fps,
        log_file,
        ..
    } = settings;
    let keymap = match Keymap::with_overrides(&config.keys) {
        Ok(k) => k,
        Err(e) => {
            crate::errln!("gantry: key bindings: {e}");
            return 2;
        }
    };
    let Some(options) = options(&args, max_fps, engine_options.read_only) else {
        crate::errln!(
            "gantry serve: no configuration directory (set HOME or XDG_CONFIG_HOME), or pass --authorized-keys FILE and --host-key FILE"
        );
        return 2;
    };
    if engine_options.in_cluster {
        crate::logging::to_stderr();
    } else {
        crate::logging::to_stderr_and_file(log_file.as_deref());
    }
    let Ok(mut stop_signals) = StopSignals::listen() else {
        crate::errln!("gantry: cannot listen for SIGTERM and SIGINT");
        return 1;
    };
    let session = match open_session(&engine_options, config.clone()).await {
        Ok(s) => s,
        Err(e) => {
            crate::errln!("gantry: {e:#}");
            return 2;
        }
    };
    if let Some(dir) = &session.sim_dir {
        crate::errln!(
            "gantry serve: simulated cloud: state in {} (endpoints.json, token, kubeconfig)",
            dir.display()
        );
    }
    let place = session.info.place.clone();
    let cluster = session.cluster_name();
    let engine = Engine::start(session);
    let _alongside = match super::alongside::start(&kept, &engine.handle(), args.health).await {
        Ok(a) => a,
        Err(e) => {
            engine.stop().await;
            crate::errln!("gantry serve: {e}");
            return 2;
        }
    };
    let stop = CancellationToken::new();
    let server = match Server::bind(&options, engine.handle(), config, keymap, stop.clone()).await {
        Ok(s) => s,
        Err(e) => {
            engine.stop().await;
            crate::errln!("gantry serve: {e}");
            return 2;
        }
    };
    let (viewers, operators) = server.key_counts();
    let addr = server
        .local_addr()
        .map_or(options.listen.to_string(), |a| a.to_string());
    crate::errln!(
        "gantry serve: cluster {cluster} in {place}; listening on {addr}, host key {}",
        server.host_key_fingerprint
    );
    crate::errln!(
        "gantry serve: {viewers} keys may watch ({}), {operators} may change things ({}); SIGTERM or Ctrl-C stops",
        options.authorized_keys.display(),
        options
            .operators
            .as_ref()
            .map_or("none".into(), |p| p.display().to_string()),
    );
    if viewers + operators == 0 {
        crate::errln!(
            "gantry serve: nobody can connect yet: add a public key to {} (read again when it changes)",
            options.authorized_keys.display()
        );
    }
    let serving = tokio::spawn(server.run());
    stop_signals.recv().await;
    stop.cancel();
    let _ = serving.await;
    engine.stop().await;
    crate::errln!("gantry serve: stopped");
    0
}

/// The flags, with the defaults filled in from the config and state directories.
fn options(args: &ServeArgs, max_fps: Option<u32>, read_only: bool) -> Option<ServeOptions> {
    let config_dir = crate::paths::config_dir();
    let authorized_keys = match &args.authorized_keys {
        Some(p) => p.clone(),
        None => config_dir.as_ref()?.join("authorized_keys"),
    };
    let operators = args
        .operators
        .clone()
        .or_else(|| config_dir.as_ref().map(|d| d.join("operators")));
    let host_key = match &args.host_key {
        Some(p) => p.clone(),
        None => crate::paths::state_dir()?.join("ssh_host_ed25519_key"),
    };
    Some(ServeOptions {
        listen: args.ssh_listen,
        authorized_keys,
        operators,
        host_key,
        max_viewers: args.max_viewers,
        // Every viewer of `serve` is remote.
        pacing: Pacing::resolve(max_fps, true),
        read_only,
        login_grace: std::time::Duration::from_secs(args.login_grace),
        max_startups: args.max_startups as usize,
    })
}
