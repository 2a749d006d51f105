//! Reading one exporter: `GET /api/v1/namespaces/NS/pods/NAME:PORT/proxy/metrics` through the
//! API server (kube has no helper for the pod proxy: a raw request, its body read up to a
//! bound), bounded in time and in bytes so a stuck or flooding exporter costs little.

use std::time::Duration;

use http_body_util::BodyExt;

use super::Exporter;

/// How long one exporter may take to answer whole.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// The most of one exporter's answer read: GKE's 8 H100s print 45 KB; a node of GPUs each with
/// its pods' own labels copied in (`--kubernetes-enable-pod-labels`) a good deal more.
pub const MAX_BYTES: usize = 4 << 20;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScrapeError {
    /// A 403: the permission it lacks.
    #[error(
        "forbidden to get pods/proxy in namespace {namespace} (grant get on pods/proxy there): {message}"
    )]
    Forbidden { namespace: String, message: String },
    #[error("exporter {pod}: {why}")]
    Failed { pod: String, why: String },
    #[error("exporter {pod}: not DCGM's text: {why}")]
    Unreadable { pod: String, why: String },
}

/// The exporter's GPUs, as its text says.
pub async fn scrape(
    client: &kube::Client,
    exporter: &Exporter,
) -> Result<Vec<crate::dcgm::Gpu>, ScrapeError> {
    let text = fetch(client, exporter).await?;
    crate::dcgm::read(&text).map_err(|e| ScrapeError::Unreadable {
        pod: exporter.pod.clone(),
        why: e.to_string(),
    })
}

/// The proxy path of an exporter's `/metrics`.
pub fn path(exporter: &Exporter) -> String {
    format!(
        "/api/v1/namespaces/{}/pods/{}:{}/proxy/metrics",
        exporter.namespace, exporter.pod, exporter.port
    )
}

/// The exporter's text, read within [`TIMEOUT`] and [`MAX_BYTES`].
pub async fn fetch(client: &kube::Client, exporter: &Exporter) -> Result<String, ScrapeError> {
    let failed = |why: String| ScrapeError::Failed {
        pod: exporter.pod.clone(),
        why,
    };
    let request = http::Request::get(path(exporter))
        .header(http::header::ACCEPT, "text/plain")
        .body(kube::client::Body::empty())
        .map_err(|e| failed(e.to_string()))?;
    let read = async {
        let response = client
            .send(request)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let status = response.status();
        let body = read_bounded(response.into_body(), MAX_BYTES)
            .await
            .map_err(failed)?;
        let text = String::from_utf8_lossy(&body).into_owned();
        if status == http::StatusCode::FORBIDDEN {
            return Err(ScrapeError::Forbidden {
                namespace: exporter.namespace.clone(),
                message: status_message(&text),
            });
        }
        if !status.is_success() {
            return Err(failed(format!("{status}: {}", status_message(&text))));
        }
        Ok(text)
    };
    tokio::time::timeout(TIMEOUT, read)
        .await
        .map_err(|_| failed(format!("no answer within {}s", TIMEOUT.as_secs())))?
}

/// At most `limit` bytes of a body; past it, an error (a text cut short would be read wrong).
async fn read_bounded(mut body: kube::client::Body, limit: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| e.to_string())?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > limit {
                return Err(format!("answer longer than {} MiB", limit >> 20));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// What an API server's error says (its `Status` message), else the body's first line.
fn status_message(body: &str) -> String {
    let message = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| body.lines().next().unwrap_or_default().to_string());
    crate::sanitize::one_line(&message)
        .chars()
        .take(200)
        .collect()
}
