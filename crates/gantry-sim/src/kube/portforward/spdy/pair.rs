//! One forwarded connection: a data stream and an error stream of one `requestID`, carried to a
//! TCP connection to the pod's port. As containerd does (`copyPortForward`), the forward ends
//! when one direction stops and the other has not followed within a second; then, as the
//! kubelet does, the error stream is closed and after it the data stream.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::frame::Frame;
use crate::kube::portforward::pod::PodTarget;

/// containerd's grace for the second direction once the first has stopped.
const GRACE: Duration = Duration::from_secs(1);
/// The most one DATA frame carries from the pod.
const CHUNK: usize = 32 * 1024;

/// What the client sends on a data stream, in order.
#[derive(Debug)]
pub enum Inbound {
    Data(Bytes),
    /// The client half-closed the stream (DATA with FLAG_FIN).
    Fin,
}

/// The two streams of one forwarded connection and how to end it early.
pub struct Pair {
    pub port: u16,
    pub data: u32,
    pub error: u32,
    pub inbound: mpsc::Receiver<Inbound>,
    /// Cancelled when the client resets the data stream: nothing more is sent on it.
    pub reset: CancellationToken,
}

pub async fn forward(
    pod: Arc<PodTarget>,
    mut pair: Pair,
    out: mpsc::Sender<Frame>,
    session: CancellationToken,
) {
    let connected = tokio::select! {
        _ = session.cancelled() => return,
        c = pod.connect(pair.port) => c,
    };
    match connected {
        Ok(tcp) => {
            let (from_pod, to_pod) = tcp.into_split();
            let up = carry_up(&mut pair.inbound, to_pod);
            let down = carry_down(from_pod, pair.data, &out);
            tokio::pin!(up, down);
            let stopped = tokio::select! {
                _ = session.cancelled() => return,
                _ = pair.reset.cancelled() => None,
                _ = &mut up => Some(false),
                _ = &mut down => Some(true),
            };
            if let Some(down_first) = stopped {
                let other = async {
                    if down_first {
                        (&mut up).await
                    } else {
                        (&mut down).await
                    }
                };
                tokio::select! {
                    _ = session.cancelled() => return,
                    _ = pair.reset.cancelled() => {}
                    _ = tokio::time::timeout(GRACE, other) => {}
                }
            }
        }
        Err(message) => {
            let _ = out
                .send(Frame::Data {
                    stream_id: pair.error,
                    fin: false,
                    data: Bytes::from(message),
                })
                .await;
        }
    }
    let _ = out.send(fin(pair.error)).await;
    if !pair.reset.is_cancelled() {
        let _ = out.send(fin(pair.data)).await;
    }
}

fn fin(stream_id: u32) -> Frame {
    Frame::Data {
        stream_id,
        fin: true,
        data: Bytes::new(),
    }
}

/// Client to pod, until the client's FIN (passed on as the socket's write shutdown).
async fn carry_up(inbound: &mut mpsc::Receiver<Inbound>, mut to_pod: OwnedWriteHalf) {
    while let Some(message) = inbound.recv().await {
        match message {
            Inbound::Data(bytes) => {
                if to_pod.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            Inbound::Fin => break,
        }
    }
    let _ = to_pod.shutdown().await;
}

/// Pod to client, until the pod closes its side.
async fn carry_down(mut from_pod: OwnedReadHalf, data: u32, out: &mpsc::Sender<Frame>) {
    let mut buf = BytesMut::with_capacity(CHUNK);
    loop {
        buf.reserve(CHUNK);
        match from_pod.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let frame = Frame::Data {
                    stream_id: data,
                    fin: false,
                    data: buf.split().freeze(),
                };
                if out.send(frame).await.is_err() {
                    return;
                }
            }
        }
    }
}
