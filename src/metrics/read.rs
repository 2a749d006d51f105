//! A whole log from a reader (a saved file) through one [`MetricStream`]: read in large
//! pieces cut wherever the buffer ends, as the kubelet's pieces are, and the unterminated last
//! update read too. The one way saved logs are read, for `gantry metrics` and for the attempts
//! a viewer compares with.

use std::io::{self, BufRead, BufReader, Read};

use super::LineParser;
use super::pieces::{MetricStream, Sample};

/// Bytes read at a time.
const CHUNK: usize = 64 * 1024;

/// Calls `each` with every sample of the log, in order.
pub fn samples(source: impl Read, mut each: impl FnMut(&Sample<'_>)) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(CHUNK, source);
    let mut stream = MetricStream::new();
    let mut parser = LineParser::new();
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        stream.push(&mut parser, chunk, &mut each);
        let used = chunk.len();
        reader.consume(used);
    }
    stream.finish(&mut parser, &mut each);
    Ok(())
}
