//! One SPDY/3.1 session of port forwarding, as the kubelet serves it (its `httpStreamHandler` over
//! apimachinery's spdy connection, itself moby/spdystream): the client opens streams carrying
//! `streamType` (`error` or `data`), `port` and `requestID`; each is accepted with an empty
//! SYN_REPLY or reset if its headers are wrong, and once a request has both streams its port is
//! forwarded (`pair`). PINGs the client starts are echoed; a GOAWAY or the end of the
//! connection ends every forward. spdystream does no flow control (it neither sends nor heeds
//! WINDOW_UPDATE), so neither does this side; SETTINGS and WINDOW_UPDATE are read and let be.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::sync::CancellationToken;

use super::frame::{CANCEL, Frame, FrameDecoder, FrameEncoder, PROTOCOL_ERROR};
use super::headers::{Headers, get};
use super::pair::{self, Inbound, Pair};
use crate::kube::portforward::pod::PodTarget;

/// Frames read ahead of a data stream's forward before reading waits for it.
const INBOUND_BACKLOG: usize = 16;

/// Serves port forwarding on `io` (a connection upgraded to SPDY/3.1, or SPDY carried in
/// WebSocket messages) until the client goes or `stop` is cancelled.
pub async fn serve<IO>(io: IO, pod: Arc<PodTarget>, stop: CancellationToken)
where
    IO: AsyncRead + AsyncWrite + Send + 'static,
{
    let (read, write) = tokio::io::split(io);
    let encoder = match FrameEncoder::new() {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!(error = %e, "SPDY header compression could not start");
            return;
        }
    };
    let (out, outgoing) = mpsc::channel(64);
    let writer = tokio::spawn(write_frames(FramedWrite::new(write, encoder), outgoing));
    let mut frames = FramedRead::new(read, FrameDecoder::new());
    let mut session = Session {
        pod,
        out,
        cancel: stop.child_token(),
        next_stream_id: 1,
        open: HashMap::new(),
        requests: HashMap::new(),
    };
    loop {
        let frame = tokio::select! {
            _ = session.cancel.cancelled() => break,
            f = frames.next() => f,
        };
        match frame {
            Some(Ok(frame)) => {
                if session.handle(frame).await.is_break() {
                    break;
                }
            }
            Some(Err(e)) => {
                tracing::debug!(error = %e, "port-forward session ends on a bad frame");
                break;
            }
            None => break,
        }
    }
    session.cancel.cancel();
    drop(session);
    let _ = writer.await;
}

/// Sends frames in order, flushing when none are waiting.
async fn write_frames<W>(mut sink: FramedWrite<W, FrameEncoder>, mut frames: mpsc::Receiver<Frame>)
where
    W: AsyncWrite + Unpin,
{
    while let Some(frame) = frames.recv().await {
        if sink.feed(frame).await.is_err() {
            return;
        }
        while let Ok(more) = frames.try_recv() {
            if sink.feed(more).await.is_err() {
                return;
            }
        }
        if sink.flush().await.is_err() {
            return;
        }
    }
    let _ = sink.close().await;
}

/// A stream the client may still send on.
enum Open {
    Data {
        inbound: mpsc::Sender<Inbound>,
        reset: CancellationToken,
    },
    Error,
}

/// A request's streams, until it has both.
#[derive(Default)]
struct Request {
    data: Option<Pair>,
    error: Option<u32>,
}

struct Session {
    pod: Arc<PodTarget>,
    out: mpsc::Sender<Frame>,
    cancel: CancellationToken,
    /// The lowest id the client's next stream may have (spdystream's `receivedStreamId`).
    next_stream_id: u32,
    open: HashMap<u32, Open>,
    requests: HashMap<String, Request>,
}

impl Session {
    async fn send(&self, frame: Frame) {
        let _ = self.out.send(frame).await;
    }

    async fn handle(&mut self, frame: Frame) -> ControlFlow<()> {
        match frame {
            Frame::SynStream {
                stream_id,
                fin,
                headers,
                ..
            } => self.opened(stream_id, fin, &headers).await,
            Frame::Data {
                stream_id,
                fin,
                data,
            } => self.data(stream_id, fin, data).await,
            Frame::RstStream { stream_id, .. } => {
                if let Some(Open::Data { reset, .. }) = self.open.remove(&stream_id) {
                    reset.cancel();
                }
            }
            // Pings the client starts have odd ids; ours (even) it would echo, but none are sent.
            Frame::Ping { id } if id % 2 == 1 => self.send(Frame::Ping { id }).await,
            Frame::GoAway { .. } => return ControlFlow::Break(()),
            Frame::Ping { .. }
            | Frame::SynReply { .. }
            | Frame::Headers { .. }
            | Frame::Settings { .. }
            | Frame::WindowUpdate { .. }
            | Frame::Unknown { .. } => {}
        }
        ControlFlow::Continue(())
    }

    async fn opened(&mut self, stream_id: u32, fin: bool, headers: &Headers) {
        if stream_id.is_multiple_of(2) || stream_id < self.next_stream_id {
            return self.reset(stream_id, PROTOCOL_ERROR).await;
        }
        self.next_stream_id = stream_id.saturating_add(2);
        let (kind, port) = match accepted(headers) {
            Ok(accepted) => accepted,
            Err(why) => {
                tracing::debug!(stream_id, why, "port-forward stream refused");
                return self.reset(stream_id, CANCEL).await;
            }
        };
        let request_id = get(headers, "requestid")
            .filter(|id| !id.is_empty())
            .map(str::to_string)
            // Clients older than request ids open error then data streams back to back.
            .unwrap_or_else(|| match kind {
                StreamKind::Error => stream_id.to_string(),
                StreamKind::Data => stream_id.saturating_sub(2).to_string(),
            });
        let request = self.requests.entry(request_id.clone()).or_default();
        let taken = match kind {
            StreamKind::Error => request.error.is_some(),
            StreamKind::Data => request.data.is_some(),
        };
        if taken {
            tracing::debug!(
                stream_id,
                request_id,
                "a second stream of one type for a request"
            );
            return self.reset(stream_id, CANCEL).await;
        }
        self.send(Frame::SynReply {
            stream_id,
            fin: false,
            headers: Vec::new(),
        })
        .await;
        let request = self.requests.entry(request_id.clone()).or_default();
        match kind {
            StreamKind::Error => {
                request.error = Some(stream_id);
                if !fin {
                    self.open.insert(stream_id, Open::Error);
                }
            }
            StreamKind::Data => {
                let (inbound, receiver) = mpsc::channel(INBOUND_BACKLOG);
                let reset = CancellationToken::new();
                if fin {
                    let _ = inbound.try_send(Inbound::Fin);
                } else {
                    let reset = reset.clone();
                    self.open.insert(stream_id, Open::Data { inbound, reset });
                }
                request.data = Some(Pair {
                    port,
                    data: stream_id,
                    error: 0,
                    inbound: receiver,
                    reset,
                });
            }
        }
        self.start_if_complete(&request_id);
    }

    fn start_if_complete(&mut self, request_id: &str) {
        let complete = self
            .requests
            .get(request_id)
            .is_some_and(|r| r.data.is_some() && r.error.is_some());
        if !complete {
            return;
        }
        if let Some(Request {
            data: Some(mut pair),
            error: Some(error),
        }) = self.requests.remove(request_id)
        {
            pair.error = error;
            tokio::spawn(pair::forward(
                self.pod.clone(),
                pair,
                self.out.clone(),
                self.cancel.clone(),
            ));
        }
    }

    async fn data(&mut self, stream_id: u32, fin: bool, data: Bytes) {
        let inbound = match self.open.get(&stream_id) {
            Some(Open::Data { inbound, .. }) => inbound.clone(),
            // The client never writes on an error stream; its FIN only half-closes it.
            Some(Open::Error) => {
                if fin {
                    self.open.remove(&stream_id);
                }
                return;
            }
            None => return,
        };
        if !data.is_empty() {
            tokio::select! {
                _ = self.cancel.cancelled() => return,
                _ = inbound.send(Inbound::Data(data)) => {}
            }
        }
        if fin {
            self.open.remove(&stream_id);
            tokio::select! {
                _ = self.cancel.cancelled() => {}
                _ = inbound.send(Inbound::Fin) => {}
            }
        }
    }

    async fn reset(&self, stream_id: u32, status: u32) {
        self.send(Frame::RstStream { stream_id, status }).await;
    }
}

#[derive(Debug, Clone, Copy)]
enum StreamKind {
    Data,
    Error,
}

/// The checks of the kubelet's `httpStreamReceived`: a port above 0 and a known stream type.
fn accepted(headers: &Headers) -> Result<(StreamKind, u16), String> {
    let port = match get(headers, "port") {
        None | Some("") => return Err("\"port\" header is required".into()),
        Some(p) => p
            .parse::<u16>()
            .map_err(|e| format!("unable to parse {p:?} as a port: {e}"))?,
    };
    if port == 0 {
        return Err("port \"0\" must be > 0".into());
    }
    let kind = match get(headers, "streamtype") {
        None | Some("") => return Err("\"streamType\" header is required".into()),
        Some("data") => StreamKind::Data,
        Some("error") => StreamKind::Error,
        Some(other) => return Err(format!("invalid stream type {other:?}")),
    };
    Ok((kind, port))
}
