//! The simulated cloud's files for other programs (token, CA, kubeconfig, endpoints): written
//! readable by their owner only, and replaced whole, so kubectl or gcloud never read half of one.
//! The simulator keeps its own writer and its own context names (gcloud's `gke_P_L_C`) rather
//! than borrow Gantry's: what it writes is what gcloud would, whatever the client does.

use std::io::Write;
use std::path::Path;

/// Writes `contents` to `path` with mode 0600, through a temporary file renamed into place.
pub fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "state".into());
    let tmp = dir.join(format!(".{name}.sim{}", std::process::id()));
    {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// The kubeconfig context gcloud writes for a GKE cluster: `gke_PROJECT_LOCATION_CLUSTER`.
pub fn context_name(project: &str, location: &str, cluster: &str) -> String {
    format!("gke_{project}_{location}_{cluster}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn state_files_are_the_owners_alone_and_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        write_private(&path, b"one").unwrap();
        write_private(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn contexts_are_named_as_gcloud_names_them() {
        assert_eq!(
            context_name("demo-project", "us-central1-a", "ml-gke-cluster"),
            "gke_demo-project_us-central1-a_ml-gke-cluster"
        );
    }
}
