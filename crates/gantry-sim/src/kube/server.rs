//! The HTTPS listener of one simulated cluster's API server. Under the `restart` fault it goes
//! down (every connection cut, the port closed) and comes back on the same port.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::faults::Faults;

/// How long the API server stays down when the `restart` fault fires.
const RESTART_DOWNTIME: Duration = Duration::from_millis(300);

fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// One incarnation of the API server, in every request's extensions: what a connection the
/// handler takes over (a port-forward) ends with, as every connection ends when it goes down.
#[derive(Debug, Clone)]
pub struct Incarnation(pub CancellationToken);

/// Whether the API server is serving, and how many times it has come up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Availability {
    pub up: bool,
    pub incarnation: u64,
}

/// Binds `127.0.0.1:port` (0 lets the OS pick) and serves `router` over TLS until `stop`.
pub async fn start(
    port: u16,
    tls: Arc<rustls::ServerConfig>,
    router: axum::Router,
    faults: Arc<Faults>,
    stop: CancellationToken,
) -> std::io::Result<(u16, watch::Receiver<Availability>)> {
    let listener = bind(SocketAddr::from(([127, 0, 0, 1], port)))?;
    let port = listener.local_addr()?.port();
    let (tx, rx) = watch::channel(Availability {
        up: true,
        incarnation: 1,
    });
    tokio::spawn(supervise(listener, port, tls, router, faults, stop, tx));
    Ok((port, rx))
}

async fn supervise(
    mut listener: TcpListener,
    port: u16,
    tls: Arc<rustls::ServerConfig>,
    router: axum::Router,
    faults: Arc<Faults>,
    stop: CancellationToken,
    availability: watch::Sender<Availability>,
) {
    loop {
        let incarnation = stop.child_token();
        let restart_after = faults.restart();
        {
            // The serving future owns the listener: leaving this block drops it, closing the port.
            let serving = serve(listener, tls.clone(), router.clone(), incarnation.clone());
            tokio::pin!(serving);
            // The fault can be set at run time: look for it while serving.
            let restart = async {
                let mut after = restart_after;
                loop {
                    match after {
                        Some(d) => break tokio::time::sleep(d).await,
                        None => {
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            after = faults.restart();
                        }
                    }
                }
            };
            tokio::select! {
                _ = stop.cancelled() => { incarnation.cancel(); return; }
                _ = &mut serving => return,
                _ = restart => {
                    faults.fired("restart");
                    tracing::info!(port, "simulated API server restarting");
                    incarnation.cancel();
                }
            }
        }
        availability.send_modify(|a| a.up = false);
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(RESTART_DOWNTIME) => {}
        }
        listener = loop {
            match bind(SocketAddr::from(([127, 0, 0, 1], port))) {
                Ok(l) => {
                    availability.send_modify(|a| {
                        a.up = true;
                        a.incarnation += 1;
                    });
                    break l;
                }
                Err(e) => {
                    tracing::warn!(port, error = %e, "rebinding the simulated API server");
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                    }
                }
            }
        };
    }
}

async fn serve(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    router: axum::Router,
    cancel: CancellationToken,
) {
    let acceptor = TlsAcceptor::from(tls);
    let router = router.layer(axum::Extension(Incarnation(cancel.clone())));
    loop {
        let (tcp, _) = tokio::select! {
            _ = cancel.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::debug!(error = %e, "accept failed");
                    continue;
                }
            }
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let router = router.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let stream = tokio::select! {
                _ = cancel.cancelled() => return,
                s = acceptor.accept(tcp) => match s {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::debug!(error = %e, "TLS handshake failed");
                        return;
                    }
                }
            };
            let service = hyper_util::service::TowerToHyperService::new(router);
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::select! {
                _ = cancel.cancelled() => {}
                r = conn => {
                    if let Err(e) = r {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                }
            }
        });
    }
}
