//! Port forwarding over the WebSocket channel protocol, as the kubelet serves it
//! (`portforward/websocket.go` over apiserver's `wsstream`) and kube-rs's `Api::portforward`
//! speaks it: the ports asked in the URL are channels, port i's data on channel 2i and its
//! errors on 2i+1, each message prefixed with its channel byte (`v4.channel.k8s.io`, or no
//! subprotocol) or its channel digit before base64 (`v4.base64.channel.k8s.io`). Each channel's
//! first message is its port, two bytes little-endian. A WebSocket cannot half-close: the
//! client ends by closing it, and once every port's forward has ended the server closes it.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::{Bytes, BytesMut};
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use super::pod::PodTarget;

/// containerd's grace for the second direction once the first has stopped.
const GRACE: Duration = Duration::from_secs(1);
/// The most one message carries from the pod.
const CHUNK: usize = 32 * 1024;

/// How channel messages are written: the subprotocol negotiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// `v4.channel.k8s.io` (or none): a channel byte, then the bytes.
    Binary,
    /// `v4.base64.channel.k8s.io`: a channel digit, then the bytes in base64, as text.
    Base64,
}

impl Codec {
    pub fn message(self, channel: u8, data: &[u8]) -> Message {
        match self {
            Codec::Binary => {
                let mut frame = BytesMut::with_capacity(data.len() + 1);
                frame.extend_from_slice(&[channel]);
                frame.extend_from_slice(data);
                Message::Binary(frame.freeze())
            }
            Codec::Base64 => {
                let digit = char::from(b'0'.saturating_add(channel));
                Message::text(format!("{digit}{}", STANDARD.encode(data)))
            }
        }
    }

    /// A client message's channel and bytes; None for what carries no data.
    pub fn read(self, message: Message) -> Option<(u8, Bytes)> {
        match (self, message) {
            (Codec::Binary, Message::Binary(mut bytes)) if !bytes.is_empty() => {
                let channel = bytes.split_to(1)[0];
                Some((channel, bytes))
            }
            (Codec::Base64, Message::Text(text)) => {
                let (digit, rest) = text.as_str().split_at_checked(1)?;
                let channel = digit.as_bytes()[0].checked_sub(b'0')?;
                Some((channel, Bytes::from(STANDARD.decode(rest).ok()?)))
            }
            _ => None,
        }
    }
}

pub async fn serve<S>(
    ws: WebSocketStream<S>,
    pod: Arc<PodTarget>,
    ports: Vec<u16>,
    codec: Codec,
    stop: CancellationToken,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sink, mut stream) = ws.split();
    let (out, mut outgoing) = mpsc::channel::<Message>(64);
    let writer = tokio::spawn(async move {
        while let Some(message) = outgoing.recv().await {
            if sink.send(message).await.is_err() {
                return;
            }
        }
        let _ = sink.close().await;
    });
    let cancel = stop.child_token();
    let mut to_ports = Vec::with_capacity(ports.len());
    let mut forwards = JoinSet::new();
    for (index, port) in ports.iter().copied().enumerate() {
        let data = u8::try_from(index * 2).unwrap_or(u8::MAX - 1);
        for channel in [data, data + 1] {
            let _ = out.send(codec.message(channel, &port.to_le_bytes())).await;
        }
        let (to_port, inbound) = mpsc::channel(16);
        to_ports.push(to_port);
        let forward = Forward {
            pod: pod.clone(),
            port,
            data,
            codec,
            out: out.clone(),
        };
        forwards.spawn(forward.run(inbound, cancel.clone()));
    }
    drop(out);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => break,
            done = forwards.join_next() => if done.is_none() { break },
            message = stream.next() => {
                let Some(Ok(message)) = message else { break };
                if message.is_close() {
                    break;
                }
                let Some((channel, bytes)) = codec.read(message) else { continue };
                // Odd channels are the server's error channels: nothing is read from them.
                let to_port = to_ports.get(usize::from(channel / 2)).filter(|_| channel % 2 == 0);
                if let Some(to_port) = to_port
                    && !bytes.is_empty()
                {
                    tokio::select! {
                        _ = cancel.cancelled() => break,
                        _ = to_port.send(bytes) => {}
                    }
                }
            }
        }
    }
    cancel.cancel();
    drop(to_ports);
    while forwards.join_next().await.is_some() {}
    let _ = writer.await;
}

/// One port of the request: dialled, then carried both ways.
struct Forward {
    pod: Arc<PodTarget>,
    port: u16,
    data: u8,
    codec: Codec,
    out: mpsc::Sender<Message>,
}

impl Forward {
    async fn run(self, mut inbound: mpsc::Receiver<Bytes>, cancel: CancellationToken) {
        let connected = tokio::select! {
            _ = cancel.cancelled() => return,
            c = self.pod.connect(self.port) => c,
        };
        let tcp = match connected {
            Ok(tcp) => tcp,
            Err(message) => {
                let error = self.codec.message(self.data + 1, message.as_bytes());
                let _ = self.out.send(error).await;
                return;
            }
        };
        let (mut from_pod, mut to_pod) = tcp.into_split();
        let up = async {
            while let Some(bytes) = inbound.recv().await {
                if to_pod.write_all(&bytes).await.is_err() {
                    break;
                }
            }
            let _ = to_pod.shutdown().await;
        };
        let down = async {
            let mut buf = BytesMut::with_capacity(CHUNK);
            loop {
                buf.reserve(CHUNK);
                match from_pod.read_buf(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        let message = self.codec.message(self.data, &buf.split());
                        if self.out.send(message).await.is_err() {
                            return;
                        }
                    }
                }
            }
        };
        tokio::pin!(up, down);
        let down_first = tokio::select! {
            _ = cancel.cancelled() => return,
            _ = &mut up => false,
            _ = &mut down => true,
        };
        let other = async {
            if down_first {
                (&mut up).await
            } else {
                (&mut down).await
            }
        };
        tokio::select! {
            _ = cancel.cancelled() => {}
            _ = tokio::time::timeout(GRACE, other) => {}
        }
    }
}
