//! SPDY carried in a WebSocket, as kube-apiserver's `TunnelingHandler` and client-go's
//! `TunnelingConnection` carry it: every write is one binary message, and reads run on through
//! the messages as one byte stream. A text message is a protocol error (client-go says
//! "invalid message type received"); the client's close ends the stream.

use std::io;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::io::{CopyToBytes, SinkWriter, StreamReader};

/// The WebSocket as the byte stream SPDY runs on.
pub fn bytes<S>(ws: WebSocketStream<S>) -> impl AsyncRead + AsyncWrite + Send + 'static
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sink, stream) = ws.split();
    let incoming = stream.filter_map(|message| {
        std::future::ready(match message {
            Ok(Message::Binary(bytes)) => Some(Ok(bytes)),
            Ok(Message::Text(_)) => Some(Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "invalid message type received",
            ))),
            // Pings are answered by the WebSocket itself; after a close the stream ends.
            Ok(_) => None,
            Err(e) => Some(Err(io::Error::other(e))),
        })
    });
    let outgoing = sink
        .sink_map_err(io::Error::other)
        .with(|bytes: Bytes| std::future::ready(Ok::<_, io::Error>(Message::Binary(bytes))));
    tokio::io::join(
        StreamReader::new(Box::pin(incoming)),
        SinkWriter::new(CopyToBytes::new(Box::pin(outgoing))),
    )
}
