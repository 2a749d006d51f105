//! A SPDY session served to a client speaking through this module's own framing, over an
//! in-memory pipe: the streams kubectl opens, and what a client may do wrong or early.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, DuplexStream, ReadHalf, WriteHalf};
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::sync::CancellationToken;

use super::frame::{CANCEL, Frame, FrameDecoder, FrameEncoder, PROTOCOL_ERROR};
use crate::kube::portforward::pod::PodTarget;
use crate::kube::test_pods::Sim;
use crate::test_support::PATIENCE;

struct Client {
    to: FramedWrite<WriteHalf<DuplexStream>, FrameEncoder>,
    from: FramedRead<ReadHalf<DuplexStream>, FrameDecoder>,
    served: tokio::task::JoinHandle<()>,
}

impl Client {
    async fn start(sim: &Sim, pod: &str) -> Client {
        let target = Arc::new(PodTarget::find(sim.state(), "default", pod).unwrap());
        let (client, server) = tokio::io::duplex(256 * 1024);
        let served = tokio::spawn(super::serve(server, target, CancellationToken::new()));
        let (read, write) = tokio::io::split(client);
        Client {
            to: FramedWrite::new(write, FrameEncoder::new().unwrap()),
            from: FramedRead::new(read, FrameDecoder::new()),
            served,
        }
    }

    async fn send(&mut self, frame: Frame) {
        self.to.send(frame).await.unwrap();
    }

    async fn next(&mut self) -> Frame {
        tokio::time::timeout(PATIENCE, self.from.next())
            .await
            .expect("a frame in time")
            .expect("the session still open")
            .unwrap()
    }

    async fn open(&mut self, stream_id: u32, stream_type: &str, port: u16) {
        let headers = vec![
            ("streamType".to_string(), stream_type.to_string()),
            ("port".to_string(), port.to_string()),
            ("requestID".to_string(), "0".to_string()),
        ];
        self.send(Frame::SynStream {
            stream_id,
            fin: false,
            unidirectional: false,
            headers,
        })
        .await;
    }

    /// Opens error stream 1 (half-closed at once, as kubectl does) and data stream 3.
    async fn forward(&mut self, port: u16) {
        self.open(1, "error", port).await;
        assert_eq!(self.next().await, reply(1));
        self.send(data(1, true, b"")).await;
        self.open(3, "data", port).await;
        assert_eq!(self.next().await, reply(3));
    }
}

fn reply(stream_id: u32) -> Frame {
    Frame::SynReply {
        stream_id,
        fin: false,
        headers: Vec::new(),
    }
}

fn data(stream_id: u32, fin: bool, bytes: &'static [u8]) -> Frame {
    Frame::Data {
        stream_id,
        fin,
        data: Bytes::from_static(bytes),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forward_echoes_then_closes_the_error_stream_and_after_it_the_data_stream() {
    let sim = Sim::start().await;
    sim.running_pod("web").await;
    let port = sim.echo("web").await;
    let mut client = Client::start(&sim, "web").await;
    client.forward(port).await;
    client.send(data(3, false, b"hello")).await;
    assert_eq!(client.next().await, data(3, false, b"hello"));
    // The client's FIN reaches the pod as the end of its input; the echo closes, and so do
    // the streams: the error stream first, empty.
    client.send(data(3, true, b"")).await;
    assert_eq!(client.next().await, data(1, true, b""));
    assert_eq!(client.next().await, data(3, true, b""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_port_is_said_on_the_error_stream_and_both_streams_close() {
    let sim = Sim::start().await;
    sim.running_pod("web").await;
    let idle = sim.idle_port("web").await;
    let mut client = Client::start(&sim, "web").await;
    client.forward(idle).await;
    let Frame::Data {
        stream_id: 1,
        fin: false,
        data: message,
    } = client.next().await
    else {
        panic!("an error message on the error stream");
    };
    let message = String::from_utf8(message.to_vec()).unwrap();
    assert!(
        message.starts_with(&format!("error forwarding port {idle} to pod "))
            && message.ends_with("connect: connection refused"),
        "{message}"
    );
    assert_eq!(client.next().await, data(1, true, b""));
    assert_eq!(client.next().await, data(3, true, b""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resetting_the_data_stream_ends_the_pods_connection_and_closes_only_the_error_stream() {
    let sim = Sim::start().await;
    sim.running_pod("web").await;
    let listener = sim.listen("web").await;
    let port = listener.local_addr().unwrap().port();
    let mut client = Client::start(&sim, "web").await;
    client.forward(port).await;
    let (mut pod_side, _) = tokio::time::timeout(PATIENCE, listener.accept())
        .await
        .unwrap()
        .unwrap();
    client
        .send(Frame::RstStream {
            stream_id: 3,
            status: CANCEL,
        })
        .await;
    let mut rest = Vec::new();
    let read = tokio::time::timeout(PATIENCE, pod_side.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the pod's connection ends");
    assert_eq!(client.next().await, data(1, true, b""));
    client.send(Frame::Ping { id: 1 }).await;
    assert_eq!(
        client.next().await,
        Frame::Ping { id: 1 },
        "nothing more on the reset data stream"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_without_a_port_of_an_unknown_type_or_with_a_stale_id_are_reset() {
    let sim = Sim::start().await;
    sim.running_pod("web").await;
    let mut client = Client::start(&sim, "web").await;
    client
        .send(Frame::SynStream {
            stream_id: 1,
            fin: false,
            unidirectional: false,
            headers: vec![("streamtype".into(), "data".into())],
        })
        .await;
    let cancel = |stream_id| Frame::RstStream {
        stream_id,
        status: CANCEL,
    };
    assert_eq!(client.next().await, cancel(1));
    client.open(3, "stdin", 8080).await;
    assert_eq!(client.next().await, cancel(3));
    client.open(5, "data", 0).await;
    assert_eq!(client.next().await, cancel(5));
    for stale in [3, 6] {
        client.open(stale, "data", 8080).await;
        let protocol_error = Frame::RstStream {
            stream_id: stale,
            status: PROTOCOL_ERROR,
        };
        assert_eq!(client.next().await, protocol_error);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_pings_are_echoed_and_its_goaway_ends_the_session() {
    let sim = Sim::start().await;
    sim.running_pod("web").await;
    let mut client = Client::start(&sim, "web").await;
    client
        .send(Frame::Settings {
            entries: vec![(7, 1 << 20)],
        })
        .await;
    client
        .send(Frame::WindowUpdate {
            stream_id: 0,
            delta: 1 << 20,
        })
        .await;
    client.send(Frame::Ping { id: 7 }).await;
    assert_eq!(client.next().await, Frame::Ping { id: 7 });
    client
        .send(Frame::GoAway {
            last_good_stream_id: 0,
            status: 0,
        })
        .await;
    tokio::time::timeout(PATIENCE, client.served)
        .await
        .expect("the session ends")
        .unwrap();
    assert!(client.from.next().await.is_none(), "and its side closes");
}
