//! Where Gantry keeps things on this machine, as the XDG base directories say: the config file
//! (and, later, files such as authorized keys) under `$XDG_CONFIG_HOME/gantry`, saved logs and
//! Gantry's own log under `$XDG_STATE_HOME/gantry`. A leaf: every layer asks here.

use std::path::PathBuf;

/// `$XDG_CONFIG_HOME/gantry` (else `~/.config/gantry`).
pub fn config_dir() -> Option<PathBuf> {
    xdg_dir("XDG_CONFIG_HOME", ".config")
}

/// The audit file's name in the state directory: every change to the cloud, who asked, and
/// how it went.
pub const AUDIT_FILE: &str = "audit.jsonl";

/// `$XDG_STATE_HOME/gantry` (else `~/.local/state/gantry`).
pub fn state_dir() -> Option<PathBuf> {
    xdg_dir("XDG_STATE_HOME", ".local/state")
}

/// `$VAR/gantry` when `VAR` is an absolute path (the spec ignores relative ones), else
/// `$HOME/<fallback>/gantry`.
fn xdg_dir(var: &str, fallback: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(fallback)))
        .map(|base| base.join("gantry"))
}

/// A safe single path component for the log directory (pod, job and cluster names are RFC 1123
/// already; a kubeconfig context name may hold anything).
pub fn path_component(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match cleaned.as_str() {
        "" | "." | ".." => "_".to_string(),
        _ => cleaned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_component_never_leaves_its_directory() {
        assert_eq!(path_component("gke_p_l/c"), "gke_p_l_c");
        assert_eq!(path_component(".."), "_");
        assert_eq!(path_component(""), "_");
        assert_eq!(path_component("ml-training-job-2"), "ml-training-job-2");
    }
}
