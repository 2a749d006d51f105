//! A load balancer's listeners: one per TCP port of the Service, on the balancer's address, each
//! handing its connections on (`connection`) until the balancer goes.

use std::fmt;
use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::connection;
use crate::kube::cluster::ClusterState;

/// A port of the Service as its spec gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicePort {
    pub port: u16,
    pub protocol: String,
}

impl fmt::Display for ServicePort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.port, self.protocol)
    }
}

/// A listener, and why it is not on the Service's own port when it is not.
pub struct Bound {
    pub listener: TcpListener,
    pub moved: Option<String>,
}

/// Listens for `port` at `ip`, on the port itself if it can be had, else one the system picks.
pub fn bind(ip: IpAddr, port: &ServicePort) -> Result<Bound, String> {
    if port.protocol != "TCP" {
        return Err(format!(
            "the simulator balances TCP only, not {}",
            port.protocol
        ));
    }
    let own = listener(SocketAddr::new(ip, port.port));
    let moved = match own {
        Ok(listener) => {
            return Ok(Bound {
                listener,
                moved: None,
            });
        }
        Err(e) if e.kind() == ErrorKind::PermissionDenied => {
            "needs the privilege to bind ports below 1024".to_string()
        }
        Err(e) if e.kind() == ErrorKind::AddrInUse => "is taken".to_string(),
        Err(e) => return Err(format!("binding {ip}:{}: {e}", port.port)),
    };
    let listener =
        listener(SocketAddr::new(ip, 0)).map_err(|e| format!("binding {ip}:{}: {e}", port.port))?;
    Ok(Bound {
        listener,
        moved: Some(moved),
    })
}

fn listener(at: SocketAddr) -> std::io::Result<TcpListener> {
    let std = std::net::TcpListener::bind(at)?;
    std.set_nonblocking(true)?;
    TcpListener::from_std(std)
}

/// Which Service port a listener serves.
#[derive(Clone)]
pub struct Target {
    pub state: Arc<ClusterState>,
    pub namespace: String,
    pub name: String,
    pub port: u16,
}

pub async fn accept(target: Target, listener: TcpListener, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            a = listener.accept() => a,
        };
        match accepted {
            Ok((socket, peer)) => {
                let _ = socket.set_nodelay(true);
                tokio::spawn(connection::carry(
                    target.clone(),
                    socket,
                    peer,
                    stop.clone(),
                ));
            }
            Err(e) => tracing::debug!(error = %e, "load balancer accept failed"),
        }
    }
}
