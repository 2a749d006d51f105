//! A streaming response body fed from a task: watches and log follows write chunks into it, and
//! an error chunk cuts the connection the way a dropped stream looks to a client.

use axum::body::{Body, Bytes};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

pub type Chunk = Result<Bytes, std::io::Error>;

/// A body and the sender that feeds it. Dropping the sender ends the body cleanly.
pub fn channel() -> (mpsc::Sender<Chunk>, Body) {
    let (tx, rx) = mpsc::channel::<Chunk>(32);
    (tx, Body::from_stream(ReceiverStream::new(rx)))
}

/// Ends the body with an error, so the connection is cut mid-stream.
pub async fn cut(tx: &mpsc::Sender<Chunk>, why: &str) {
    let _ = tx
        .send(Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            why.to_string(),
        )))
        .await;
}
