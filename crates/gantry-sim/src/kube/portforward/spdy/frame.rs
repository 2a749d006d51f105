//! SPDY/3.1 frames on the wire (SPDY Protocol, Draft 3.1, section 2.2): an 8-byte head — a
//! control bit, then either version and type or a stream id, then flags and a 24-bit length —
//! and the payload. Header blocks go through the session's zlib streams (`headers`).

use bytes::{Buf, BufMut, Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use super::headers::{Deflater, Headers, Inflater};

pub const VERSION: u16 = 3;

const SYN_STREAM: u16 = 1;
const SYN_REPLY: u16 = 2;
const RST_STREAM: u16 = 3;
const SETTINGS: u16 = 4;
const PING: u16 = 6;
const GOAWAY: u16 = 7;
const HEADERS: u16 = 8;
const WINDOW_UPDATE: u16 = 9;

const FLAG_FIN: u8 = 0x01;
const FLAG_UNIDIRECTIONAL: u8 = 0x02;

/// RST_STREAM status codes (section 2.6.3) the server sends.
pub const PROTOCOL_ERROR: u32 = 1;
pub const CANCEL: u32 = 5;

/// The largest payload a 24-bit length allows.
const MAX_LENGTH: usize = (1 << 24) - 1;

#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    SynStream {
        stream_id: u32,
        fin: bool,
        unidirectional: bool,
        headers: Headers,
    },
    SynReply {
        stream_id: u32,
        fin: bool,
        headers: Headers,
    },
    RstStream {
        stream_id: u32,
        status: u32,
    },
    /// (id, value) pairs; the flags of each are not kept.
    Settings {
        entries: Vec<(u32, u32)>,
    },
    Ping {
        id: u32,
    },
    GoAway {
        last_good_stream_id: u32,
        status: u32,
    },
    Headers {
        stream_id: u32,
        fin: bool,
        headers: Headers,
    },
    WindowUpdate {
        stream_id: u32,
        delta: u32,
    },
    Data {
        stream_id: u32,
        fin: bool,
        data: Bytes,
    },
    /// A control frame of a type SPDY/3 does not define: ignored, as section 2.2.1 says.
    Unknown {
        frame_type: u16,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("SPDY version {0} is not spoken here (only 3)")]
    Version(u16),
    #[error("malformed SPDY frame: {0}")]
    Malformed(String),
    #[error("SPDY header compression: {0}")]
    Compression(String),
}

/// Reads frames, inflating header blocks with the client's zlib stream.
pub struct FrameDecoder {
    inflater: Inflater,
}

impl FrameDecoder {
    pub fn new() -> Self {
        Self {
            inflater: Inflater::new(),
        }
    }
}

impl Decoder for FrameDecoder {
    type Item = Frame;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        if src.len() < 8 {
            return Ok(None);
        }
        let length = usize::from(src[5]) << 16 | usize::from(src[6]) << 8 | usize::from(src[7]);
        if src.len() < 8 + length {
            src.reserve(8 + length - src.len());
            return Ok(None);
        }
        let mut head = src.split_to(8);
        let payload = src.split_to(length).freeze();
        let first = head.get_u32();
        let flags = head.get_u8();
        if first & 0x8000_0000 == 0 {
            return Ok(Some(Frame::Data {
                stream_id: first & 0x7fff_ffff,
                fin: flags & FLAG_FIN != 0,
                data: payload,
            }));
        }
        let version = u16::try_from((first >> 16) & 0x7fff).unwrap_or(0);
        if version != VERSION {
            return Err(FrameError::Version(version));
        }
        let frame_type = u16::try_from(first & 0xffff).unwrap_or(0);
        self.control(frame_type, flags, payload).map(Some)
    }
}

impl FrameDecoder {
    fn control(&mut self, frame_type: u16, flags: u8, mut p: Bytes) -> Result<Frame, FrameError> {
        let fin = flags & FLAG_FIN != 0;
        let frame = match frame_type {
            SYN_STREAM => {
                need(&p, 10, "SYN_STREAM")?;
                let stream_id = p.get_u32() & 0x7fff_ffff;
                p.advance(6); // associated stream, priority, slot: unused by port forwarding
                Frame::SynStream {
                    stream_id,
                    fin,
                    unidirectional: flags & FLAG_UNIDIRECTIONAL != 0,
                    headers: self.inflater.inflate(&p)?,
                }
            }
            SYN_REPLY | HEADERS => {
                need(&p, 4, "SYN_REPLY")?;
                let stream_id = p.get_u32() & 0x7fff_ffff;
                let headers = self.inflater.inflate(&p)?;
                if frame_type == SYN_REPLY {
                    Frame::SynReply {
                        stream_id,
                        fin,
                        headers,
                    }
                } else {
                    Frame::Headers {
                        stream_id,
                        fin,
                        headers,
                    }
                }
            }
            RST_STREAM => {
                need(&p, 8, "RST_STREAM")?;
                Frame::RstStream {
                    stream_id: p.get_u32() & 0x7fff_ffff,
                    status: p.get_u32(),
                }
            }
            SETTINGS => {
                need(&p, 4, "SETTINGS")?;
                let count = p.get_u32() as usize;
                need(&p, count.saturating_mul(8), "SETTINGS")?;
                let entries = (0..count)
                    .map(|_| (p.get_u32() & 0x00ff_ffff, p.get_u32()))
                    .collect();
                Frame::Settings { entries }
            }
            PING => {
                need(&p, 4, "PING")?;
                Frame::Ping { id: p.get_u32() }
            }
            GOAWAY => {
                need(&p, 8, "GOAWAY")?;
                Frame::GoAway {
                    last_good_stream_id: p.get_u32() & 0x7fff_ffff,
                    status: p.get_u32(),
                }
            }
            WINDOW_UPDATE => {
                need(&p, 8, "WINDOW_UPDATE")?;
                Frame::WindowUpdate {
                    stream_id: p.get_u32() & 0x7fff_ffff,
                    delta: p.get_u32() & 0x7fff_ffff,
                }
            }
            other => Frame::Unknown { frame_type: other },
        };
        Ok(frame)
    }
}

fn need(payload: &Bytes, len: usize, what: &str) -> Result<(), FrameError> {
    if payload.len() < len {
        return Err(FrameError::Malformed(format!(
            "{what} of {} bytes",
            payload.len()
        )));
    }
    Ok(())
}

/// Writes frames, deflating header blocks with the server's zlib stream.
pub struct FrameEncoder {
    deflater: Deflater,
}

impl FrameEncoder {
    pub fn new() -> Result<Self, FrameError> {
        Ok(Self {
            deflater: Deflater::new()?,
        })
    }
}

impl Encoder<Frame> for FrameEncoder {
    type Error = FrameError;

    fn encode(&mut self, frame: Frame, dst: &mut BytesMut) -> Result<(), FrameError> {
        let fin = |f: bool| if f { FLAG_FIN } else { 0 };
        match frame {
            Frame::Data {
                stream_id,
                fin: f,
                data,
            } => {
                head(dst, stream_id & 0x7fff_ffff, fin(f), data.len())?;
                dst.put_slice(&data);
            }
            Frame::SynStream {
                stream_id,
                fin: f,
                unidirectional,
                headers,
            } => {
                let block = self.deflater.deflate(&headers)?;
                let flags = fin(f)
                    | if unidirectional {
                        FLAG_UNIDIRECTIONAL
                    } else {
                        0
                    };
                control(dst, SYN_STREAM, flags, 10 + block.len())?;
                dst.put_u32(stream_id);
                dst.put_u32(0);
                dst.put_u16(0);
                dst.put_slice(&block);
            }
            Frame::SynReply {
                stream_id,
                fin: f,
                headers,
            } => {
                let block = self.deflater.deflate(&headers)?;
                control(dst, SYN_REPLY, fin(f), 4 + block.len())?;
                dst.put_u32(stream_id);
                dst.put_slice(&block);
            }
            Frame::Headers {
                stream_id,
                fin: f,
                headers,
            } => {
                let block = self.deflater.deflate(&headers)?;
                control(dst, HEADERS, fin(f), 4 + block.len())?;
                dst.put_u32(stream_id);
                dst.put_slice(&block);
            }
            Frame::RstStream { stream_id, status } => {
                control(dst, RST_STREAM, 0, 8)?;
                dst.put_u32(stream_id);
                dst.put_u32(status);
            }
            Frame::Settings { entries } => {
                control(dst, SETTINGS, 0, 4 + 8 * entries.len())?;
                dst.put_u32(u32::try_from(entries.len()).unwrap_or(0));
                for (id, value) in entries {
                    dst.put_u32(id & 0x00ff_ffff);
                    dst.put_u32(value);
                }
            }
            Frame::Ping { id } => {
                control(dst, PING, 0, 4)?;
                dst.put_u32(id);
            }
            Frame::GoAway {
                last_good_stream_id,
                status,
            } => {
                control(dst, GOAWAY, 0, 8)?;
                dst.put_u32(last_good_stream_id);
                dst.put_u32(status);
            }
            Frame::WindowUpdate { stream_id, delta } => {
                control(dst, WINDOW_UPDATE, 0, 8)?;
                dst.put_u32(stream_id);
                dst.put_u32(delta);
            }
            Frame::Unknown { frame_type } => control(dst, frame_type, 0, 0)?,
        }
        Ok(())
    }
}

fn control(dst: &mut BytesMut, frame_type: u16, flags: u8, len: usize) -> Result<(), FrameError> {
    head(
        dst,
        0x8000_0000 | u32::from(VERSION) << 16 | u32::from(frame_type),
        flags,
        len,
    )
}

fn head(dst: &mut BytesMut, first: u32, flags: u8, len: usize) -> Result<(), FrameError> {
    if len > MAX_LENGTH {
        return Err(FrameError::Malformed(format!("a frame of {len} bytes")));
    }
    dst.reserve(8 + len);
    dst.put_u32(first);
    dst.put_u32(u32::from(flags) << 24 | u32::try_from(len).unwrap_or(0));
    Ok(())
}
