//! `pods/{name}/portforward`: a connection to a port of a pod, carried to where the pod listens
//! on this machine. Three protocols, as kube-apiserver and the kubelet serve them:
//! - WebSocket with the channel protocol (`v4.channel.k8s.io`, `v4.base64.channel.k8s.io`, or
//!   none), the ports in the URL (`channels`): kube-rs's `Api::portforward`;
//! - SPDY/3.1 tunnelled in WebSocket (`SPDY/3.1+portforward.k8s.io`): what kubectl tries first
//!   (`PortForwardWebsockets`, on by default since 1.31);
//! - SPDY/3.1 after a plain `Upgrade: SPDY/3.1` with `X-Stream-Protocol-Version:
//!   portforward.k8s.io`: kubectl's fallback (and its only way with
//!   `KUBECTL_PORT_FORWARD_WEBSOCKETS=false`).
//!
//! The pod is checked first (`pod`), so a missing pod is a 404 before any upgrade, as upstream.

mod channels;
mod pod;
mod spdy;
#[cfg(test)]
mod tests;
mod tunnel;

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_util::sync::CancellationToken;

use super::api::Params;
use super::cluster::ClusterState;
use super::errors::ApiError;
use super::server::Incarnation;
use channels::Codec;
use pod::PodTarget;

/// The one port-forward protocol version there is (the kubelet's `SupportedPortForwardProtocols`).
const PORT_FORWARD_V1: &str = "portforward.k8s.io";
/// What a WebSocket subprotocol carrying SPDY starts with (`WebsocketsSPDYTunnelingPrefix`).
const TUNNEL_PREFIX: &str = "SPDY/3.1+";
const CHANNEL_V4: &str = "v4.channel.k8s.io";
const BASE64_CHANNEL_V4: &str = "v4.base64.channel.k8s.io";
/// Channels are numbered by a byte and each port takes two.
const MAX_PORTS: usize = 127;

/// The connection's upgrade, taken from the request before its body is read, and the server
/// incarnation that took the connection: an upgraded connection ends with it.
pub struct Upgrade {
    on: Option<OnUpgrade>,
    incarnation: Option<Incarnation>,
}

impl<S: Send + Sync> FromRequestParts<S> for Upgrade {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Upgrade {
            on: parts.extensions.remove::<OnUpgrade>(),
            incarnation: parts.extensions.get::<Incarnation>().cloned(),
        })
    }
}

pub fn serve(
    state: &Arc<ClusterState>,
    namespace: &str,
    name: &str,
    headers: &HeaderMap,
    params: &Params,
    upgrade: Upgrade,
) -> Response {
    let pod = match PodTarget::find(state, namespace, name) {
        Ok(pod) => Arc::new(pod),
        Err(refused) => return refused.into_response(),
    };
    // The incarnation's token is the cluster's child: either ending ends the forward.
    let stop = match &upgrade.incarnation {
        Some(Incarnation(token)) => token.child_token(),
        None => state.stop.child_token(),
    };
    if is_websocket(headers) {
        return websocket(pod, headers, params, upgrade, stop);
    }
    if has_token(headers, header::CONNECTION, "upgrade")
        && has_token(headers, header::UPGRADE, "spdy/3.1")
    {
        return match negotiate(&values(headers, "x-stream-protocol-version")) {
            Err(refused) => refused.into_response(),
            Ok(()) => switch(
                upgrade,
                &[
                    (header::CONNECTION, "Upgrade"),
                    (header::UPGRADE, "SPDY/3.1"),
                    (
                        header::HeaderName::from_static("x-stream-protocol-version"),
                        PORT_FORWARD_V1,
                    ),
                ],
                move |io| spdy::serve(io, pod, stop),
            ),
        };
    }
    ApiError::bad_request("Upgrade request required").into_response()
}

fn websocket(
    pod: Arc<PodTarget>,
    headers: &HeaderMap,
    params: &Params,
    upgrade: Upgrade,
    stop: CancellationToken,
) -> Response {
    let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
        return ApiError::bad_request("websocket: Sec-WebSocket-Key is missing").into_response();
    };
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .map(HeaderValue::as_bytes)
        != Some(b"13")
    {
        return ApiError::bad_request("websocket: unsupported version, 13 is spoken")
            .into_response();
    }
    let accept = derive_accept_key(key.as_bytes());
    let offered = values(headers, header::SEC_WEBSOCKET_PROTOCOL.as_str());
    // Any tunnelling subprotocol sends the request to the tunnel, as `TranslatingHandler` does.
    let tunnelled: Vec<String> = offered
        .iter()
        .filter(|p| p.starts_with(TUNNEL_PREFIX) && p.ends_with(".k8s.io"))
        .map(|p| p[TUNNEL_PREFIX.len()..].to_string())
        .collect();
    if !tunnelled.is_empty() {
        if let Err(refused) = negotiate(&tunnelled) {
            return refused.into_response();
        }
        let protocol = format!("{TUNNEL_PREFIX}{PORT_FORWARD_V1}");
        return switch_websocket(upgrade, &accept, &protocol, move |ws| {
            spdy::serve(tunnel::bytes(ws), pod, stop)
        });
    }
    let chosen = if offered.is_empty() {
        Some((String::new(), Codec::Binary))
    } else {
        offered.iter().find_map(|p| match p.as_str() {
            CHANNEL_V4 => Some((p.clone(), Codec::Binary)),
            BASE64_CHANNEL_V4 => Some((p.clone(), Codec::Base64)),
            _ => None,
        })
    };
    let Some((protocol, codec)) = chosen else {
        return (
            StatusCode::FORBIDDEN,
            format!(
                "requested protocol(s) are not supported: {offered:?}; supports [\"\" \
                 \"{CHANNEL_V4}\" \"{BASE64_CHANNEL_V4}\"]"
            ),
        )
            .into_response();
    };
    let ports = match ports(params) {
        Ok(ports) => ports,
        Err(e) => return e.into_response(),
    };
    switch_websocket(upgrade, &accept, &protocol, move |ws| {
        channels::serve(ws, pod, ports, codec, stop)
    })
}

/// The `ports` of the request (`PodPortForwardOptions`): repeated or comma-separated.
fn ports(params: &Params) -> Result<Vec<u16>, ApiError> {
    let Some(given) = params.get("ports").filter(|p| !p.is_empty()) else {
        return Err(ApiError::bad_request(
            "query parameter \"port\" is required",
        ));
    };
    let mut ports = Vec::new();
    for p in given.split(',') {
        let port: u16 = p
            .trim()
            .parse()
            .map_err(|e| ApiError::bad_request(format!("unable to parse {p:?} as a port: {e}")))?;
        if port == 0 {
            return Err(ApiError::bad_request(format!("port {p:?} must be > 0")));
        }
        ports.push(port);
    }
    if ports.len() > MAX_PORTS {
        return Err(ApiError::bad_request(format!(
            "at most {MAX_PORTS} ports can be forwarded at once"
        )));
    }
    Ok(ports)
}

/// httpstream's `Handshake`: the client's first protocol the server speaks, else 403 naming
/// what the server accepts.
fn negotiate(client: &[String]) -> Result<(), Refusal> {
    if client.is_empty() {
        return Err(Refusal::Api(ApiError::bad_request(
            "unable to upgrade: X-Stream-Protocol-Version is required",
        )));
    }
    if client.iter().any(|p| p == PORT_FORWARD_V1) {
        return Ok(());
    }
    Err(Refusal::Unnegotiated(format!(
        "unable to upgrade: unable to negotiate protocol: client supports {client:?}, server \
         accepts [\"{PORT_FORWARD_V1}\"]"
    )))
}

/// Why no connection is upgraded, said as the API server, or the kubelet behind it, says it.
#[derive(Debug)]
pub enum Refusal {
    /// The API server's own answer: a `Status`.
    Api(ApiError),
    /// The kubelet's, passed through as it wrote it: plain text.
    Text(StatusCode, String),
    /// No protocol in common: 403, with the versions the server accepts.
    Unnegotiated(String),
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Api(e) => e.into_response(),
            Refusal::Text(status, text) => (status, text).into_response(),
            Refusal::Unnegotiated(text) => {
                let mut refused = (StatusCode::FORBIDDEN, text).into_response();
                refused.headers_mut().insert(
                    "x-accepted-stream-protocol-versions",
                    HeaderValue::from_static(PORT_FORWARD_V1),
                );
                refused
            }
        }
    }
}

fn switch_websocket<F, Fut>(upgrade: Upgrade, accept: &str, protocol: &str, then: F) -> Response
where
    F: FnOnce(WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut headers = vec![
        (header::CONNECTION, "Upgrade"),
        (header::UPGRADE, "websocket"),
        (header::SEC_WEBSOCKET_ACCEPT, accept),
    ];
    if !protocol.is_empty() {
        headers.push((header::SEC_WEBSOCKET_PROTOCOL, protocol));
    }
    switch(upgrade, &headers, move |io| async move {
        then(WebSocketStream::from_raw_socket(io, Role::Server, None).await).await
    })
}

/// Answers 101 and, once hyper hands the connection over, serves it with `then`.
fn switch<F, Fut>(upgrade: Upgrade, headers: &[(header::HeaderName, &str)], then: F) -> Response
where
    F: FnOnce(TokioIo<hyper::upgrade::Upgraded>) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Some(on_upgrade) = upgrade.on else {
        return ApiError::new(
            500,
            "InternalError",
            "unable to upgrade: unable to hijack response",
        )
        .into_response();
    };
    let mut response = StatusCode::SWITCHING_PROTOCOLS.into_response();
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            response.headers_mut().insert(name.clone(), value);
        }
    }
    tokio::spawn(async move {
        match on_upgrade.await {
            Ok(upgraded) => then(TokioIo::new(upgraded)).await,
            Err(e) => tracing::debug!(error = %e, "port-forward upgrade failed"),
        }
    });
    response
}

fn is_websocket(headers: &HeaderMap) -> bool {
    has_token(headers, header::CONNECTION, "upgrade")
        && headers
            .get(header::UPGRADE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// Whether a comma-separated header holds `token` (any case).
fn has_token(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|v| {
        v.to_str()
            .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    })
}

/// Every comma-separated value of every instance of a header, in order.
fn values(headers: &HeaderMap, name: &str) -> Vec<String> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect()
}
