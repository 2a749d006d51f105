//! The kubelet's line timestamps, parsed fast.

/// Parses the kubelet's RFC 3339 timestamps, remembering the last whole second: lines come
/// many to a second, and then only the fraction needs reading.
#[derive(Debug, Default)]
pub struct TimestampCache {
    /// `YYYY-MM-DDTHH:MM:SS` of the last timestamp parsed in full, and that second in ns.
    second: Option<([u8; SECOND_PREFIX], i128)>,
}

const SECOND_PREFIX: usize = 19;

impl TimestampCache {
    /// Nanoseconds since the epoch, or None when `head` is not a timestamp.
    pub fn parse(&mut self, head: &[u8]) -> Option<i128> {
        if let Some((prefix, second_ns)) = &self.second
            && head.get(..SECOND_PREFIX) == Some(prefix.as_slice())
            && let Some(fraction) = utc_fraction_ns(&head[SECOND_PREFIX..])
        {
            return Some(second_ns + fraction);
        }
        let ts = std::str::from_utf8(head)
            .ok()?
            .parse::<jiff::Timestamp>()
            .ok()?
            .as_nanosecond();
        if let Some(fraction) = head.get(SECOND_PREFIX..).and_then(utc_fraction_ns)
            && let Some(prefix) = head.get(..SECOND_PREFIX)
            && let Ok(prefix) = <[u8; SECOND_PREFIX]>::try_from(prefix)
        {
            self.second = Some((prefix, ts - fraction));
        }
        Some(ts)
    }
}

/// `Z`, or `.` then 1 to 9 digits then `Z`, as nanoseconds; None for any other shape.
fn utc_fraction_ns(tail: &[u8]) -> Option<i128> {
    match tail {
        [b'Z'] => Some(0),
        [b'.', digits @ .., b'Z'] if (1..=9).contains(&digits.len()) => {
            let mut ns: i128 = 0;
            for d in digits {
                if !d.is_ascii_digit() {
                    return None;
                }
                ns = ns * 10 + i128::from(d - b'0');
            }
            Some(ns * 10i128.pow(9 - digits.len() as u32))
        }
        _ => None,
    }
}
