//! SPDY/3 header blocks: a count and length-prefixed names and values, carried zlib-compressed.
//! Each direction of a session is one zlib stream that starts with SPDY's preset dictionary and
//! is sync-flushed at the end of every block, so a block is read with the state every earlier
//! block left (moby/spdystream keeps one `zlib.Reader` and one `zlib.Writer` per connection).

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use super::dictionary::DICTIONARY;
use super::frame::FrameError;

/// A header block's name/value pairs in the order sent; names are lower case on the wire.
pub type Headers = Vec<(String, String)>;

/// The most a header block may inflate to: far above any real one, it bounds a hostile peer.
const MAX_BLOCK: usize = 256 * 1024;

/// The value of `name` (first of its values), if present.
pub fn get<'a>(headers: &'a Headers, name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The compressing side of a session: what the server sends.
pub struct Deflater {
    z: Compress,
}

impl Deflater {
    pub fn new() -> Result<Self, FrameError> {
        let mut z = Compress::new(Compression::default(), true);
        z.set_dictionary(DICTIONARY)
            .map_err(|e| FrameError::Compression(e.to_string()))?;
        Ok(Self { z })
    }

    /// The block's bytes, compressed and sync-flushed: the peer inflates all of it at once.
    pub fn deflate(&mut self, headers: &Headers) -> Result<Vec<u8>, FrameError> {
        let raw = encode_block(headers);
        let mut out = Vec::with_capacity(raw.len() + 64);
        let mut input = raw.as_slice();
        loop {
            if out.capacity() - out.len() < 64 {
                out.reserve(256);
            }
            let before = self.z.total_in();
            self.z
                .compress_vec(input, &mut out, FlushCompress::Sync)
                .map_err(|e| FrameError::Compression(e.to_string()))?;
            let consumed = usize::try_from(self.z.total_in() - before).unwrap_or(input.len());
            input = &input[consumed.min(input.len())..];
            // Done once all input is in and the flush left room unused: nothing is pending.
            if input.is_empty() && out.len() < out.capacity() {
                return Ok(out);
            }
        }
    }
}

/// The inflating side of a session: what the client sent.
pub struct Inflater {
    z: Decompress,
}

impl Inflater {
    pub fn new() -> Self {
        Self {
            z: Decompress::new(true),
        }
    }

    /// One compressed block, inflated with what the stream's earlier blocks left.
    pub fn inflate(&mut self, mut input: &[u8]) -> Result<Headers, FrameError> {
        let mut out: Vec<u8> = Vec::with_capacity(input.len() * 4 + 64);
        loop {
            if out.capacity() - out.len() < 64 {
                out.reserve(out.capacity().max(256));
            }
            let (before_in, before_out) = (self.z.total_in(), out.len());
            let result = self
                .z
                .decompress_vec(input, &mut out, FlushDecompress::Sync);
            let consumed = usize::try_from(self.z.total_in() - before_in).unwrap_or(input.len());
            input = &input[consumed.min(input.len())..];
            let stuck = consumed == 0 && out.len() == before_out && out.len() < out.capacity();
            match result {
                Ok(Status::StreamEnd) => {
                    return Err(FrameError::Compression(
                        "the header stream ended, which SPDY never does".into(),
                    ));
                }
                Ok(_) if stuck && !input.is_empty() => {
                    return Err(FrameError::Compression(
                        "a header block does not inflate".into(),
                    ));
                }
                Ok(_) => {}
                Err(e) if e.needs_dictionary().is_some() => {
                    self.z
                        .set_dictionary(DICTIONARY)
                        .map_err(|e| FrameError::Compression(e.to_string()))?;
                    continue;
                }
                Err(e) => return Err(FrameError::Compression(e.to_string())),
            }
            if out.len() > MAX_BLOCK {
                return Err(FrameError::Malformed(format!(
                    "a header block inflates past {MAX_BLOCK} bytes"
                )));
            }
            if input.is_empty() && out.len() < out.capacity() {
                return decode_block(&out);
            }
        }
    }
}

/// The uncompressed block: a 32-bit count, then each name and value behind a 32-bit length.
/// Several values of one name are joined by NUL, as spdystream writes them.
pub fn encode_block(headers: &Headers) -> Vec<u8> {
    let mut merged: Vec<(String, String)> = Vec::new();
    for (name, value) in headers {
        let name = name.to_ascii_lowercase();
        match merged.iter_mut().find(|(n, _)| *n == name) {
            Some((_, joined)) => {
                joined.push('\0');
                joined.push_str(value);
            }
            None => merged.push((name, value.clone())),
        }
    }
    let mut out = Vec::new();
    out.extend_from_slice(&u32_len(merged.len()).to_be_bytes());
    for (name, value) in &merged {
        out.extend_from_slice(&u32_len(name.len()).to_be_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&u32_len(value.len()).to_be_bytes());
        out.extend_from_slice(value.as_bytes());
    }
    out
}

fn u32_len(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

pub fn decode_block(mut raw: &[u8]) -> Result<Headers, FrameError> {
    let count = take_u32(&mut raw)?;
    let mut headers = Vec::new();
    for _ in 0..count {
        let name = take_string(&mut raw)?.to_ascii_lowercase();
        let value = take_string(&mut raw)?;
        for one in value.split('\0') {
            headers.push((name.clone(), one.to_string()));
        }
    }
    Ok(headers)
}

fn take_u32(raw: &mut &[u8]) -> Result<u32, FrameError> {
    let Some((head, rest)) = raw.split_first_chunk::<4>() else {
        return Err(FrameError::Malformed("a header block ends early".into()));
    };
    *raw = rest;
    Ok(u32::from_be_bytes(*head))
}

fn take_string(raw: &mut &[u8]) -> Result<String, FrameError> {
    let len = take_u32(raw)? as usize;
    if raw.len() < len {
        return Err(FrameError::Malformed("a header block ends early".into()));
    }
    let (text, rest) = raw.split_at(len);
    *raw = rest;
    String::from_utf8(text.to_vec())
        .map_err(|_| FrameError::Malformed("a header is not UTF-8".into()))
}
