//! The framing against what kubectl v1.32 sends: the bytes of one forwarded connection over
//! `KUBECTL_PORT_FORWARD_WEBSOCKETS=false kubectl port-forward pod/web 18083:8080`, recorded
//! from the simulator's side: the error stream opened and half-closed, the data stream opened,
//! `ping` sent and half-closed, and the client's keep-alive PING.
#![allow(clippy::unwrap_used)]

use bytes::{Bytes, BytesMut};
use flate2::{Compress, Compression};
use tokio_util::codec::{Decoder, Encoder};

use super::dictionary::DICTIONARY;
use super::frame::{Frame, FrameDecoder, FrameEncoder, FrameError};
use super::headers::Headers;

const KUBECTL_1_32: &[u8] = &[
    0x80, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x3e, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x78, 0xf9, 0xe3, 0xc6, 0xa7, 0xc2, 0x02, 0x25, 0x3a, 0x70, 0x3a, 0x2b, 0x29, 0x4a,
    0x4d, 0xcc, 0x85, 0x16, 0x25, 0xac, 0xa9, 0xa0, 0x80, 0x86, 0x14, 0xcb, 0x45, 0xe0, 0x1c, 0x60,
    0x61, 0x60, 0x61, 0xc0, 0xc0, 0xc0, 0xc0, 0x59, 0x04, 0x89, 0xc6, 0x4c, 0x50, 0xf2, 0x66, 0x34,
    0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x80, 0x03,
    0x00, 0x01, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xc2, 0xaa, 0x19, 0x54, 0x0e, 0x25, 0x12, 0xd6, 0x0b, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00,
    0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x70, 0x69, 0x6e, 0x67, 0x00, 0x00, 0x00, 0x03, 0x01, 0x00,
    0x00, 0x00, 0x80, 0x03, 0x00, 0x06, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01,
];

fn stream_headers(stream_type: &str) -> Headers {
    vec![
        ("port".to_string(), "8080".to_string()),
        ("requestid".to_string(), "0".to_string()),
        ("streamtype".to_string(), stream_type.to_string()),
    ]
}

fn sorted(frame: Frame) -> Frame {
    match frame {
        Frame::SynStream {
            stream_id,
            fin,
            unidirectional,
            mut headers,
        } => {
            headers.sort();
            Frame::SynStream {
                stream_id,
                fin,
                unidirectional,
                headers,
            }
        }
        other => other,
    }
}

fn decode_all(decoder: &mut FrameDecoder, wire: &mut BytesMut) -> Vec<Frame> {
    let mut frames = Vec::new();
    while let Some(frame) = decoder.decode(wire).unwrap() {
        frames.push(sorted(frame));
    }
    frames
}

fn kubectl_frames() -> Vec<Frame> {
    let data = |stream_id, fin, data: &'static [u8]| Frame::Data {
        stream_id,
        fin,
        data: Bytes::from_static(data),
    };
    let open = |stream_id, stream_type| Frame::SynStream {
        stream_id,
        fin: false,
        unidirectional: false,
        headers: stream_headers(stream_type),
    };
    vec![
        open(1, "error"),
        data(1, true, b""),
        open(3, "data"),
        data(3, false, b"ping"),
        data(3, true, b""),
        Frame::Ping { id: 1 },
    ]
}

#[test]
fn kubectls_frames_read_as_its_streams_data_and_ping() {
    let mut wire = BytesMut::from(KUBECTL_1_32);
    let frames = decode_all(&mut FrameDecoder::new(), &mut wire);
    assert_eq!(frames, kubectl_frames());
    assert!(wire.is_empty());
}

#[test]
fn kubectls_frames_read_the_same_when_they_arrive_a_byte_at_a_time() {
    let mut decoder = FrameDecoder::new();
    let mut wire = BytesMut::new();
    let mut frames = Vec::new();
    for byte in KUBECTL_1_32 {
        wire.extend_from_slice(&[*byte]);
        frames.extend(decode_all(&mut decoder, &mut wire));
    }
    assert_eq!(frames, kubectl_frames());
}

#[test]
fn the_header_stream_names_the_spdy3_dictionary_by_its_adler32() {
    // A zlib header with FDICT set, then the dictionary's id, as Go's zlib.NewWriterLevelDict.
    let header = &KUBECTL_1_32[18..24];
    assert_eq!(&header[..2], &[0x78, 0xf9]);
    let mut z = Compress::new(Compression::default(), true);
    let adler = z.set_dictionary(DICTIONARY).unwrap();
    assert_eq!(adler.to_be_bytes(), header[2..6]);
    assert_eq!(adler, 0xe3c6_a7c2);
}

#[test]
fn every_frame_reads_back_as_written_with_one_zlib_stream_across_header_blocks() {
    let frames = vec![
        Frame::SynStream {
            stream_id: 1,
            fin: false,
            unidirectional: true,
            headers: stream_headers("error"),
        },
        Frame::SynReply {
            stream_id: 1,
            fin: false,
            headers: Vec::new(),
        },
        Frame::SynStream {
            stream_id: 3,
            fin: true,
            unidirectional: false,
            headers: stream_headers("data"),
        },
        Frame::Data {
            stream_id: 3,
            fin: false,
            data: Bytes::from_static(b"GET / HTTP/1.0\r\n\r\n"),
        },
        Frame::RstStream {
            stream_id: 3,
            status: 5,
        },
        Frame::Settings {
            entries: vec![(7, 65536)],
        },
        Frame::Ping { id: 2 },
        Frame::GoAway {
            last_good_stream_id: 3,
            status: 0,
        },
        Frame::Headers {
            stream_id: 3,
            fin: true,
            headers: stream_headers("data"),
        },
        Frame::WindowUpdate {
            stream_id: 3,
            delta: 1024,
        },
    ];
    let mut encoder = FrameEncoder::new().unwrap();
    let mut wire = BytesMut::new();
    for frame in frames.clone() {
        encoder.encode(frame, &mut wire).unwrap();
    }
    assert_eq!(decode_all(&mut FrameDecoder::new(), &mut wire), frames);
}

#[test]
fn a_value_list_travels_joined_by_nul_and_comes_back_as_values() {
    let headers = vec![
        ("Accept".to_string(), "a".to_string()),
        ("accept".to_string(), "b".to_string()),
    ];
    let block = super::headers::encode_block(&headers);
    assert_eq!(
        super::headers::decode_block(&block).unwrap(),
        vec![
            ("accept".to_string(), "a".to_string()),
            ("accept".to_string(), "b".to_string())
        ]
    );
}

#[test]
fn an_unknown_control_frame_is_skipped_and_the_next_one_read() {
    let mut wire =
        BytesMut::from(&[0x80, 0x03, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x02, 0xaa, 0xbb][..]);
    wire.extend_from_slice(&[
        0x80, 0x03, 0x00, 0x06, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x07,
    ]);
    let frames = decode_all(&mut FrameDecoder::new(), &mut wire);
    assert_eq!(
        frames,
        vec![Frame::Unknown { frame_type: 10 }, Frame::Ping { id: 7 }]
    );
}

#[test]
fn another_spdy_version_and_a_corrupt_header_block_are_errors_not_panics() {
    let mut spdy2 =
        BytesMut::from(&[0x80, 0x02, 0x00, 0x06, 0x00, 0x00, 0x00, 0x04, 0, 0, 0, 1][..]);
    assert!(matches!(
        FrameDecoder::new().decode(&mut spdy2),
        Err(FrameError::Version(2))
    ));
    // A SYN_STREAM whose header block is not zlib at all.
    let mut corrupt = BytesMut::from(&[0x80, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0e][..]);
    corrupt.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef]);
    assert!(matches!(
        FrameDecoder::new().decode(&mut corrupt),
        Err(FrameError::Compression(_))
    ));
    // A RST_STREAM too short for its fields.
    let mut short = BytesMut::from(&[0x80, 0x03, 0x00, 0x03, 0x00, 0x00, 0x00, 0x02, 0, 1][..]);
    assert!(matches!(
        FrameDecoder::new().decode(&mut short),
        Err(FrameError::Malformed(_))
    ));
}
