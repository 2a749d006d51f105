//! What the policies are told to do, from the resolved settings (the config over the seed's
//! defaults, the command line over the config) and the session's place — read once when the
//! engine starts, never fetched back from the workers.

use super::fallback::SpotFallback;
use super::idle::IdleSettings;
use super::watch::Thresholds;
use crate::config::Guards;

#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The training Job's name (its attempts, its Lease, its messages).
    pub job: String,
    /// Whether this engine may change the cloud at all (not read-only): a read-only engine
    /// decides nothing it would be refused.
    pub may_act: bool,
    /// `[job.recovery] max-recoveries`.
    pub max_recoveries: u32,
    /// `[job.recovery] spot-fallback`, when it is on and the Job's pool is spot on GKE.
    pub spot_fallback: Option<SpotFallback>,
    /// `[guards]`.
    pub guards: Guards,
    /// When no progress, or a pod not running, is news.
    pub thresholds: Thresholds,
    pub idle: IdleSettings,
    /// This engine is the cluster's watcher: it takes the Lease first, and makes way for none.
    pub in_cluster: bool,
}

impl Settings {
    /// The settings of `config`, for an engine that is read-only or not.
    pub fn of(
        config: &crate::config::Config,
        read_only: bool,
        spot_fallback: Option<SpotFallback>,
    ) -> Settings {
        Settings {
            job: config.job.name.clone(),
            may_act: !read_only,
            max_recoveries: config.job.recovery.max_recoveries,
            spot_fallback,
            guards: config.guards.clone(),
            thresholds: Thresholds::of(&config.guards),
            idle: IdleSettings::of(config, read_only),
            in_cluster: false,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings::of(&crate::config::Config::default(), false, None)
    }
}
