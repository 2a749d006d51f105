//! What each pod is using, from `metrics.k8s.io` (metrics-server), as k9s and kdash show it. The
//! API has no watch: it is polled. A cluster without metrics-server answers 404 (or 503 through
//! the aggregator): that is `Unavailable`, said once, not an error to retry.

use std::collections::HashMap;

use serde::Deserialize;

/// How often the usage is read while someone looks at it.
pub const POLL: std::time::Duration = std::time::Duration::from_secs(15);
/// How often a cluster without metrics-server is asked again (it may get one).
pub const RECHECK: std::time::Duration = std::time::Duration::from_secs(300);

/// One pod's usage, all containers together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PodUsage {
    pub cpu_millis: u64,
    pub memory_bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// No metrics-server: the columns say n/a.
    #[error("the cluster serves no metrics.k8s.io (no metrics-server)")]
    Unavailable,
    #[error("reading pod usage: {0}")]
    Failed(String),
}

#[derive(Deserialize)]
struct PodMetricsList {
    items: Vec<PodMetrics>,
}

#[derive(Deserialize)]
struct PodMetrics {
    metadata: Meta,
    containers: Vec<ContainerMetrics>,
}

#[derive(Deserialize)]
struct Meta {
    name: String,
}

#[derive(Deserialize)]
struct ContainerMetrics {
    usage: HashMap<String, String>,
}

/// The usage of the pods in `namespace` matching `selector`, by pod name.
pub async fn pod_usage(
    client: &kube::Client,
    namespace: &str,
    selector: &str,
) -> Result<HashMap<String, PodUsage>, UsageError> {
    let mut query = url_encode(selector);
    if !query.is_empty() {
        query = format!("?labelSelector={query}");
    }
    let request = http::Request::get(format!(
        "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods{query}"
    ))
    .body(Vec::new())
    .map_err(|e| UsageError::Failed(e.to_string()))?;
    let list: PodMetricsList = match client.request(request).await {
        Ok(list) => list,
        Err(kube::Error::Api(status)) if status.code == 404 || status.code == 503 => {
            return Err(UsageError::Unavailable);
        }
        Err(e) => return Err(UsageError::Failed(e.to_string())),
    };
    Ok(list
        .items
        .into_iter()
        .map(|pod| {
            let mut total = PodUsage::default();
            for c in &pod.containers {
                total.cpu_millis += c.usage.get("cpu").and_then(|q| milli(q)).unwrap_or(0) as u64;
                total.memory_bytes += c
                    .usage
                    .get("memory")
                    .and_then(|q| milli(q))
                    .map_or(0, |m| (m / 1000) as u64);
            }
            (pod.metadata.name, total)
        })
        .collect())
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A Kubernetes quantity in thousandths (`250m` → 250, `2` → 2000, `1Ki` → 1,024,000,
/// `1500000n` → 1.5): CPU in millicores, memory in thousandths of a byte.
pub fn milli(q: &str) -> Option<u128> {
    let q = q.trim();
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(q.len());
    let (number, suffix) = q.split_at(split);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    // Up to nine decimals (nano), kept exact.
    let digits = fraction.len().min(9) as u32;
    let fraction: u128 = if digits == 0 {
        0
    } else {
        fraction[..digits as usize].parse().ok()?
    };
    let nano = whole * 1_000_000_000 + fraction * 10u128.pow(9 - digits);
    // `nano` is the number times 10^9; the result is the quantity times 1000.
    let scaled = match suffix {
        "n" => nano / 1_000_000_000_000_000,
        "u" => nano / 1_000_000_000_000,
        "m" => nano / 1_000_000_000,
        "" => nano / 1_000_000,
        "k" => nano / 1000,
        "M" => nano,
        "G" => nano * 1000,
        "T" => nano * 1_000_000,
        "Ki" => nano * 1024 / 1_000_000,
        "Mi" => nano * (1 << 20) / 1_000_000,
        "Gi" => nano * (1 << 30) / 1_000_000,
        "Ti" => nano * (1 << 40) / 1_000_000,
        _ => return None,
    };
    Some(scaled)
}

/// CPU as k9s shows it: `950m`, `2.1`.
pub fn cpu_text(millis: u64) -> String {
    if millis < 1000 {
        format!("{millis}m")
    } else {
        format!("{:.1}", millis as f64 / 1000.0)
    }
}

/// Memory as kubectl top shows it: `512Mi`, `1.5Gi`.
pub fn memory_text(bytes: u64) -> String {
    let mi = bytes as f64 / f64::from(1u32 << 20);
    if mi < 1024.0 {
        format!("{mi:.0}Mi")
    } else {
        format!("{:.1}Gi", mi / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_as_metrics_server_writes_them() {
        assert_eq!(milli("950000000n"), Some(950));
        assert_eq!(milli("250m"), Some(250));
        assert_eq!(milli("2"), Some(2000));
        assert_eq!(milli("1.5"), Some(1500));
        assert_eq!(milli("1024Ki").map(|m| m / 1000), Some(1 << 20));
        assert_eq!(milli("2Gi").map(|m| m / 1000), Some(2 << 30));
        assert_eq!(milli("12x"), None);
    }

    #[test]
    fn usage_reads_as_k9s_shows_it() {
        assert_eq!(cpu_text(950), "950m");
        assert_eq!(cpu_text(2100), "2.1");
        assert_eq!(memory_text(512 << 20), "512Mi");
        assert_eq!(memory_text(3 << 29), "1.5Gi");
    }
}
