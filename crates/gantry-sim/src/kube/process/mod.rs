//! Pods as real processes: a container whose image matches a `--run-image PATTERN=EXECUTABLE`
//! is run by the simulated kubelet as a local process instead of the simulated workload. This
//! module holds what the cluster knows of such pods: which images they are (`run_images`, and
//! `--run-code`'s interpreter for code attempts: `run_code`), the
//! loopback address each listens on (`loopback`), and who they are to the APIs they call
//! (`identity`: their service account's token, their Google account). The kubelet's side is
//! `controllers::kubelet::process`.
//!
//! The port-forward and Service code ask [`ClusterState::pod_endpoint`] where a pod's port is
//! reached on this machine.

mod identity;
pub mod loopback;
pub mod run_code;
pub mod run_images;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Mutex, OnceLock};

use crate::kube::cluster::ClusterState;

pub use identity::{GoogleIdentity, ProjectedToken, SERVICE_ACCOUNT_DIR, project_number};
pub use loopback::per_pod_addresses;
pub use run_code::Interpreter;
pub use run_images::{RunImage, RunImageError, RunImages};

/// The live process pods of one cluster: the loopback address each was given.
#[derive(Debug, Default)]
pub struct ProcessPods {
    /// (namespace, pod name) → (uid, address): a pod recreated under its name is another pod.
    addresses: Mutex<HashMap<(String, String), (String, IpAddr)>>,
    /// The cluster's API server, once it listens: what `KUBERNETES_SERVICE_HOST` and
    /// `KUBERNETES_SERVICE_PORT` tell a pod.
    api_server: OnceLock<SocketAddr>,
    /// The port each Indexed Job's local ranks meet on (`MASTER_PORT`, `--run-code`), by the
    /// Job's uid: all of one attempt's ranks share it, no two attempts do.
    master_ports: Mutex<HashMap<String, u16>>,
    /// Where the pods' own directories are made (private; made with the first process pod),
    /// so that a cluster that stops can take them all at once.
    directories: OnceLock<tempfile::TempDir>,
}

impl ProcessPods {
    /// The API server listens here (set once, when the cluster starts).
    pub fn set_api_server(&self, address: SocketAddr) {
        let _ = self.api_server.set(address);
    }

    pub fn api_server(&self) -> Option<SocketAddr> {
        self.api_server.get().copied()
    }

    /// The directory the pods' own directories are made in.
    pub fn directories(&self) -> std::io::Result<&std::path::Path> {
        if let Some(dir) = self.directories.get() {
            return Ok(dir.path());
        }
        let made = private_dir("gantry-sim-pods-").tempdir()?;
        // Another pod may have made it meanwhile: the first one made is kept.
        let _ = self.directories.set(made);
        self.directories
            .get()
            .map(tempfile::TempDir::path)
            .ok_or_else(|| std::io::Error::other("the pods' directory is gone"))
    }

    /// The cluster stops: every pod's directory goes now, without waiting for the pods' tasks
    /// (a simulator that exits does not wait for them).
    pub fn remove_directories(&self) {
        if let Some(dir) = self.directories.get() {
            let _ = std::fs::remove_dir_all(dir.path());
        }
    }

    /// Gives the pod its own loopback address (its `status.podIP`) until [`Self::release`].
    pub fn assign(&self, namespace: &str, pod: &str, uid: &str) -> IpAddr {
        let mut addresses = self.addresses.lock().unwrap_or_else(|p| p.into_inner());
        let key = (namespace.to_string(), pod.to_string());
        if let Some((held_by, ip)) = addresses.get(&key)
            && held_by == uid
        {
            return *ip;
        }
        let ip = loopback::take();
        if let Some((_, replaced)) = addresses.insert(key, (uid.to_string(), ip)) {
            loopback::give_back(replaced);
        }
        ip
    }

    /// The pod (this uid) is gone: its address goes back.
    pub fn release(&self, namespace: &str, pod: &str, uid: &str) {
        let mut addresses = self.addresses.lock().unwrap_or_else(|p| p.into_inner());
        let key = (namespace.to_string(), pod.to_string());
        if addresses
            .get(&key)
            .is_some_and(|(held_by, _)| held_by == uid)
            && let Some((_, ip)) = addresses.remove(&key)
        {
            loopback::give_back(ip);
        }
    }

    /// The port the local ranks of the Job `job_uid` meet on: one the OS had free when first
    /// asked, the same for every rank after.
    pub fn master_port(&self, job_uid: &str) -> std::io::Result<u16> {
        let mut ports = self.master_ports.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(port) = ports.get(job_uid) {
            return Ok(*port);
        }
        let port = std::net::TcpListener::bind(("127.0.0.1", 0))?
            .local_addr()?
            .port();
        ports.insert(job_uid.to_string(), port);
        Ok(port)
    }

    /// The address of a live process pod.
    pub fn address(&self, namespace: &str, pod: &str) -> Option<IpAddr> {
        self.addresses
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(namespace.to_string(), pod.to_string()))
            .map(|(_, ip)| *ip)
    }
}

/// A temporary directory only its owner may enter (tempfile's own default follows the umask).
pub fn private_dir(prefix: &str) -> tempfile::Builder<'_, 'static> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder
}

impl ClusterState {
    /// Where on this machine a connection reaches `port` of the pod: its own loopback address
    /// and the port itself, as a pod's IP and port reach it in a real cluster. None for a pod
    /// that is not a live process pod (a simulated pod listens on nothing). Whether anything
    /// listens there is the process's affair: a connection may be refused, as it would be.
    pub fn pod_endpoint(&self, namespace: &str, pod: &str, port: u16) -> Option<SocketAddr> {
        self.processes
            .address(namespace, pod)
            .map(|ip| SocketAddr::new(ip, port))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_pod_keeps_its_address_and_a_pod_recreated_under_its_name_gets_another() {
        let pods = ProcessPods::default();
        let first = pods.assign("default", "web", "uid-1");
        assert_eq!(pods.assign("default", "web", "uid-1"), first);
        assert_eq!(pods.address("default", "web"), Some(first));
        let second = pods.assign("default", "web", "uid-2");
        // The old pod's task ends after the new one began: the new pod keeps its address.
        pods.release("default", "web", "uid-1");
        assert_eq!(pods.address("default", "web"), Some(second));
        pods.release("default", "web", "uid-2");
        assert_eq!(pods.address("default", "web"), None);
    }
}
