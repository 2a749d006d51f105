//! What a Gantry process works with, resolved once, before anything starts: the command line
//! over the config file over the seed's defaults. Every command, the TUI, `watch` and `serve`
//! take this one value, so no part of Gantry combines a flag with the config again (and none
//! reads the config a second time). The environment's own settings stay where they are read:
//! the project and location (`CLOUDSDK_CORE_PROJECT`, gcloud's config) in `gke::target`, an SSH
//! terminal's pacing in `viewer::pacing`, `GANTRY_LOG` in `logging`.

use std::path::PathBuf;

use crate::config::{Config, ConfigError};
use crate::connect::Target;
use crate::engine::SessionOptions;
use crate::k8s::manifest::LaunchFlags;
use crate::k8s::manifest::import::ImportError;

/// What the command line asked for, before the config file is read.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    /// Where to work; `read_only` here is the flag alone.
    pub session: SessionOptions,
    /// `--image`, `--env`… for the Job the TUI's (and `serve`'s) launch key starts.
    pub launch: LaunchFlags,
    /// `--max-fps`.
    pub max_fps: Option<u32>,
    /// `--log-file`.
    pub log_file: Option<PathBuf>,
}

/// The settings in force.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where the engine works; its `read_only` is the flag's or the config's.
    pub session: SessionOptions,
    /// The config file (or the defaults), with `--job-manifest` and the Job flags applied, valid.
    pub config: Config,
    /// `--max-fps`, else the config's; None: the screen's own default (`viewer::Pacing`).
    pub max_fps: Option<u32>,
    /// Gantry's own log (default: the state directory's `gantry.log`).
    pub log_file: Option<PathBuf>,
    /// In the cluster: the settings a newer Gantry carried that this one does not know.
    pub ignored: Vec<String>,
}

impl Settings {
    /// Reads the config once and settles every setting that both it and a flag can give.
    pub fn resolve(asked: Asked) -> Result<Settings, ConfigError> {
        if asked.session.in_cluster {
            return Settings::in_cluster(asked);
        }
        let mut config = load_config(&asked.session.target)?;
        asked.launch.apply(&mut config.job);
        config.validate().map_err(|message| ConfigError::Invalid {
            path: asked
                .session
                .target
                .config
                .clone()
                .or_else(Config::default_path)
                .unwrap_or_default(),
            message,
        })?;
        // Spot fallback makes and removes node pools: only on a cluster Gantry manages.
        if let Some(context) = &asked.session.target.context
            && config.job.recovery.spot_fallback != crate::config::SpotFallback::Off
        {
            return Err(ConfigError::Invalid {
                path: asked
                    .session
                    .target
                    .config
                    .clone()
                    .or_else(Config::default_path)
                    .unwrap_or_default(),
                message: format!(
                    "job.recovery.spot-fallback makes an on-demand node pool through GKE, and context {context} is a cluster Gantry does not manage: drop spot-fallback, or drop --context (and give --project and --location)"
                ),
            });
        }
        let mut session = asked.session;
        // The one rule for read-only: the flag or the config, either is enough (a flag can make
        // a session read-only, never the other way round).
        session.read_only |= config.read_only;
        Ok(Settings {
            max_fps: asked.max_fps.or(config.max_fps),
            session,
            config,
            log_file: asked.log_file,
            ignored: Vec::new(),
        })
    }

    /// The watcher's settings: those `gantry watcher install` carried into the cluster (the
    /// config resolved on the installer's machine, its secrets from the pod's Secret), read as
    /// far as this Gantry knows them.
    fn in_cluster(asked: Asked) -> Result<Settings, ConfigError> {
        let (config, ignored) = crate::watcher::inside::load()?;
        let mut session = asked.session;
        session.read_only |= config.read_only;
        Ok(Settings {
            max_fps: asked.max_fps.or(config.max_fps),
            session,
            config,
            log_file: asked.log_file,
            ignored,
        })
    }

    pub fn target(&self) -> &Target {
        &self.session.target
    }

    /// Refuse every change to the cloud: `--read-only`, or the config's `read-only = true`.
    pub fn read_only(&self) -> bool {
        self.session.read_only
    }
}

/// The configuration in force: `--config FILE` (which must exist), else the default path when
/// the file is there, else the seed's defaults; with `--job-manifest FILE`, its Job in place of
/// the `[job]` section.
pub fn load_config(target: &Target) -> Result<Config, ConfigError> {
    let mut config = match &target.config {
        Some(path) => Config::load(path)?,
        None => match Config::default_path().filter(|p| p.is_file()) {
            Some(path) => Config::load(&path)?,
            None => Config::default(),
        },
    };
    if let Some(path) = &target.job_manifest {
        config.job = crate::k8s::manifest::import::load(path)?;
    }
    Ok(config)
}

/// A `--job-manifest` file stands where the config's `[job]` section would: its errors are the
/// config's.
impl From<ImportError> for ConfigError {
    fn from(e: ImportError) -> Self {
        match e {
            ImportError::Read { path, source } => ConfigError::Read { path, source },
            ImportError::Invalid { path, message } => ConfigError::Invalid { path, message },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked_with(file: &str, read_only: bool, max_fps: Option<u32>) -> (tempfile::TempDir, Asked) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, file).unwrap();
        let mut asked = Asked {
            max_fps,
            ..Asked::default()
        };
        asked.session.target.config = Some(path);
        asked.session.read_only = read_only;
        (dir, asked)
    }

    #[test]
    fn read_only_is_the_flags_or_the_configs() {
        for (file, flag, expected) in [
            ("", false, false),
            ("", true, true),
            ("read-only = true\n", false, true),
            ("read-only = false\n", true, true),
        ] {
            let (_dir, asked) = asked_with(file, flag, None);
            let settings = Settings::resolve(asked).unwrap();
            assert_eq!(
                settings.read_only(),
                expected,
                "{file:?} with --read-only={flag}"
            );
        }
    }

    #[test]
    fn the_max_fps_flag_beats_the_config_which_beats_the_screens_default() {
        let resolved = |file: &str, flag| {
            let (_dir, asked) = asked_with(file, false, flag);
            Settings::resolve(asked).unwrap().max_fps
        };
        assert_eq!(resolved("max-fps = 30\n", Some(20)), Some(20));
        assert_eq!(resolved("max-fps = 30\n", None), Some(30));
        assert_eq!(resolved("", None), None);
    }

    #[test]
    fn the_job_flags_are_applied_before_the_config_is_checked() {
        let (_dir, mut asked) = asked_with("", false, None);
        asked.launch.overrides.image = Some("gcr.io/demo/train:v2".into());
        let settings = Settings::resolve(asked).unwrap();
        assert_eq!(
            settings.config.job.image.as_deref(),
            Some("gcr.io/demo/train:v2")
        );
    }

    #[test]
    fn spot_fallback_on_a_kubeconfig_context_is_refused_with_why() {
        let file = "[job.recovery]\nspot-fallback = \"on-demand\"\n";
        let (_dir, mut asked) = asked_with(file, false, None);
        asked.session.target.context = Some("kind-dev".into());
        let e = Settings::resolve(asked).unwrap_err();
        assert!(e.to_string().contains("context kind-dev"), "{e}");
        assert!(e.to_string().contains("spot-fallback"), "{e}");
        let (_dir, asked) = asked_with(file, false, None);
        assert!(Settings::resolve(asked).is_ok());
    }

    #[test]
    fn a_config_file_named_but_missing_is_an_error_that_names_it() {
        let mut asked = Asked::default();
        asked.session.target.config = Some("/nonexistent/gantry.toml".into());
        let e = Settings::resolve(asked).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/gantry.toml"), "{e}");
    }
}
