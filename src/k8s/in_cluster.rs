//! A client for the cluster a Gantry runs in (the watcher): its pod's ServiceAccount token, the
//! cluster's CA and its namespace, as kube's `Config::incluster()` reads them — but from a
//! directory an environment variable may name. kube reads only the fixed paths
//! (`/var/run/secrets/kubernetes.io/serviceaccount`); a pod on the simulated cluster has its
//! projected token elsewhere and is told where. The token file is read again as the kubelet
//! rotates it (kube's `token_file`), never kept in a variable of ours.

use std::path::{Path, PathBuf};

/// Where a pod's ServiceAccount token, `ca.crt` and `namespace` are.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The variable that names another directory for them.
pub const SERVICE_ACCOUNT_DIR_ENV: &str = "GANTRY_SERVICEACCOUNT_DIR";

/// The API server as the kubelet tells every container (client-go reads the same two).
const HOST_ENV: &str = "KUBERNETES_SERVICE_HOST";
const PORT_ENV: &str = "KUBERNETES_SERVICE_PORT";

/// The client, and the namespace the pod runs in.
pub struct InCluster {
    pub client: kube::Client,
    pub namespace: String,
}

/// The directory of the ServiceAccount's files.
pub fn service_account_dir() -> PathBuf {
    std::env::var_os(SERVICE_ACCOUNT_DIR_ENV)
        .filter(|d| !d.is_empty())
        .map_or_else(|| PathBuf::from(SERVICE_ACCOUNT_DIR), PathBuf::from)
}

/// A client with the pod's own credentials; an error says what is missing (outside a pod:
/// most likely everything). Needs a Tokio runtime.
pub fn connect() -> Result<InCluster, String> {
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("{name} is not set: --in-cluster runs in a pod of the cluster"))
    };
    let (host, port) = (var(HOST_ENV)?, var(PORT_ENV)?);
    config(&host, &port, &service_account_dir()).and_then(|(config, namespace)| {
        let client = super::client::builder(&config)
            .map_err(|e| e.to_string())?
            .build();
        Ok(InCluster { client, namespace })
    })
}

/// kube's in-cluster configuration from `dir`, and the namespace.
fn config(host: &str, port: &str, dir: &Path) -> Result<(kube::Config, String), String> {
    let port: u16 = port
        .parse()
        .map_err(|_| format!("{PORT_ENV}={port} is not a port"))?;
    let authority = match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(ip)) => format!("[{ip}]:{port}"),
        _ => format!("{host}:{port}"),
    };
    let url = format!("https://{authority}")
        .parse()
        .map_err(|e| format!("{HOST_ENV}={host}: {e}"))?;
    let read = |file: &str| {
        let path = dir.join(file);
        std::fs::read(&path).map_err(|e| {
            format!(
                "{}: {e} (the pod's ServiceAccount token is not mounted there; {SERVICE_ACCOUNT_DIR_ENV} names another directory)",
                path.display()
            )
        })
    };
    let ca = read("ca.crt")?;
    let roots: Vec<Vec<u8>> = rustls_pemfile::certs(&mut ca.as_slice())
        .map(|c| c.map(|der| der.to_vec()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: not PEM: {e}", dir.join("ca.crt").display()))?;
    if roots.is_empty() {
        return Err(format!("{}: no certificate", dir.join("ca.crt").display()));
    }
    let namespace = String::from_utf8_lossy(&read("namespace")?)
        .trim()
        .to_string();
    // Read once here so that a missing token is said now, not at the first request.
    read("token")?;
    let mut config = kube::Config::new(url);
    config.root_cert = Some(roots);
    config.default_namespace = namespace.clone();
    config.auth_info.token_file = Some(dir.join("token").display().to_string());
    Ok((config, namespace))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const CA: &str = "-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIUKJeFJbY0WXbN0WbYeT8vKkxN3w0wCgYIKoZIzj0EAwIw\nETEPMA0GA1UEAwwGc2ltLWNhMB4XDTI2MDEwMTAwMDAwMFoXDTM2MDEwMTAwMDAw\nMFowETEPMA0GA1UEAwwGc2ltLWNhMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END CERTIFICATE-----\n";

    #[test]
    fn the_service_account_directory_gives_the_url_the_ca_the_token_file_and_the_namespace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.crt"), CA).unwrap();
        std::fs::write(dir.path().join("namespace"), "ml\n").unwrap();
        std::fs::write(dir.path().join("token"), "t").unwrap();
        let (config, namespace) = config("127.0.0.5", "6443", dir.path()).unwrap();
        assert_eq!(namespace, "ml");
        assert_eq!(config.cluster_url.to_string(), "https://127.0.0.5:6443/");
        assert_eq!(config.root_cert.as_ref().map(Vec::len), Some(1));
        assert_eq!(
            config.auth_info.token_file.as_deref(),
            Some(dir.path().join("token").to_str().unwrap())
        );
        let (v6, _) = config_or_panic("::1", dir.path());
        assert_eq!(v6.cluster_url.to_string(), "https://[::1]:443/");
    }

    fn config_or_panic(host: &str, dir: &Path) -> (kube::Config, String) {
        config(host, "443", dir).unwrap()
    }

    #[test]
    fn a_missing_token_says_where_it_was_looked_for_and_how_to_say_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.crt"), CA).unwrap();
        std::fs::write(dir.path().join("namespace"), "ml").unwrap();
        let Err(e) = config("10.0.0.1", "443", dir.path()) else {
            panic!("a missing token is an error");
        };
        assert!(
            e.contains("token") && e.contains(SERVICE_ACCOUNT_DIR_ENV),
            "{e}"
        );
        assert!(config("10.0.0.1", "https", dir.path()).is_err());
    }
}
