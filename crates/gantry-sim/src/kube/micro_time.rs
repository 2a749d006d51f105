//! `metav1.MicroTime` as the API server reads and writes it in JSON: read with Go's
//! `time.Parse` and the layout `2006-01-02T15:04:05.000000Z07:00` (exactly six fractional
//! digits, `Z` or a `±hh:mm` offset), written in UTC with six fractional digits. A Lease's
//! `renewTime` is served back exactly as a client wrote it when that client wrote it that way
//! (client-go and k8s-openapi do), and a time the API server cannot read is refused with Go's
//! own words rather than stored.

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::Offset;

/// Go's `metav1.RFC3339Micro`.
pub const LAYOUT: &str = "2006-01-02T15:04:05.000000Z07:00";

/// The canonical form of `value` (UTC, six fractional digits), or Go's parse error.
pub fn normalize(value: &str) -> Result<String, String> {
    parse(value).map(format)
}

/// How the API server writes a MicroTime.
pub fn format(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// `time.Parse(RFC3339Micro, value)`, with its error text.
pub fn parse(value: &str) -> Result<Timestamp, String> {
    let mut reader = Reader {
        whole: value,
        rest: value,
    };
    let year = reader.fixed(4, "2006")?;
    reader.literal("-")?;
    let month = reader.fixed(2, "01")?;
    reader.literal("-")?;
    let day = reader.fixed(2, "02")?;
    reader.literal("T")?;
    let hour = reader.hour()?;
    reader.literal(":")?;
    let minute = reader.fixed(2, "04")?;
    reader.literal(":")?;
    let second = reader.fixed(2, "05")?;
    let micros = reader.fraction()?;
    let offset = reader.offset()?;
    if !reader.rest.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            quote(value),
            quote(reader.rest)
        ));
    }
    for (what, n, max) in [
        ("month", month, 12),
        ("day", day, 31),
        ("hour", hour, 23),
        ("minute", minute, 59),
        ("second", second, 59),
    ] {
        if (what == "month" && n == 0) || n > max {
            return Err(format!(
                "parsing time {}: {what} out of range",
                quote(value)
            ));
        }
    }
    let out_of_range = || format!("parsing time {}: day out of range", quote(value));
    let date =
        jiff::civil::Date::new(year as i16, month as i8, day as i8).map_err(|_| out_of_range())?;
    let time = jiff::civil::Time::new(hour as i8, minute as i8, second as i8, micros * 1000)
        .map_err(|_| out_of_range())?;
    offset
        .to_timestamp(DateTime::from_parts(date, time))
        .map_err(|e| format!("parsing time {}: {e}", quote(value)))
}

/// Go's `strconv.Quote` for the printable ASCII a time is made of.
fn quote(s: &str) -> String {
    format!("{s:?}")
}

/// What is left of the value, read chunk by chunk as Go walks the layout.
struct Reader<'a> {
    whole: &'a str,
    rest: &'a str,
}

impl Reader<'_> {
    fn bad(&self, layout_elem: &str) -> String {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(self.whole),
            quote(LAYOUT),
            quote(self.rest),
            quote(layout_elem)
        )
    }

    fn literal(&mut self, text: &str) -> Result<(), String> {
        match self.rest.strip_prefix(text) {
            Some(rest) => {
                self.rest = rest;
                Ok(())
            }
            None => Err(self.bad(text)),
        }
    }

    /// Exactly `width` digits.
    fn fixed(&mut self, width: usize, layout_elem: &str) -> Result<u32, String> {
        let digits = self
            .rest
            .get(..width)
            .filter(|d| d.bytes().all(|b| b.is_ascii_digit()));
        match digits.and_then(|d| d.parse().ok()) {
            Some(n) => {
                self.rest = &self.rest[width..];
                Ok(n)
            }
            None => Err(self.bad(layout_elem)),
        }
    }

    /// Go's `15`: one digit or two.
    fn hour(&mut self) -> Result<u32, String> {
        let width = self
            .rest
            .bytes()
            .take(2)
            .take_while(u8::is_ascii_digit)
            .count();
        if width == 0 {
            return Err(self.bad("15"));
        }
        self.fixed(width, "15")
    }

    /// `.000000`: a period (or comma) and exactly six digits, in microseconds.
    fn fraction(&mut self) -> Result<i32, String> {
        let chunk = self.rest.get(..7);
        let digits = chunk
            .filter(|c| c.starts_with(['.', ',']))
            .map(|c| &c[1..])
            .filter(|d| d.bytes().all(|b| b.is_ascii_digit()));
        match digits.and_then(|d| d.parse().ok()) {
            Some(n) => {
                self.rest = &self.rest[7..];
                Ok(n)
            }
            None => Err(self.bad(".000000")),
        }
    }

    /// `Z07:00`: `Z`, or a sign, two digits, a colon and two digits.
    fn offset(&mut self) -> Result<Offset, String> {
        if let Some(rest) = self.rest.strip_prefix('Z') {
            self.rest = rest;
            return Ok(Offset::UTC);
        }
        let bytes = self.rest.as_bytes();
        let shaped = bytes.len() >= 6
            && matches!(bytes[0], b'+' | b'-')
            && bytes[3] == b':'
            && [1, 2, 4, 5].iter().all(|&i| bytes[i].is_ascii_digit());
        if !shaped {
            return Err(self.bad("Z07:00"));
        }
        let number = |i: usize| i32::from(bytes[i] - b'0') * 10 + i32::from(bytes[i + 1] - b'0');
        let (hours, minutes) = (number(1), number(4));
        if hours > 24 || minutes > 60 {
            let what = if hours > 24 { "hour" } else { "minute" };
            return Err(format!(
                "parsing time {}: time zone offset {what} out of range",
                quote(self.whole)
            ));
        }
        let sign = if bytes[0] == b'-' { -1 } else { 1 };
        self.rest = &self.rest[6..];
        Offset::from_seconds(sign * (hours * 3600 + minutes * 60)).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_canonical_micro_time_is_kept_as_written() {
        let t = "2026-12-05T13:00:00.123456Z";
        assert_eq!(normalize(t).unwrap(), t);
    }

    #[test]
    fn an_offset_is_written_back_in_utc() {
        assert_eq!(
            normalize("2026-12-05T14:30:00.000001+01:30").unwrap(),
            "2026-12-05T13:00:00.000001Z"
        );
    }

    #[test]
    fn what_k8s_openapi_writes_the_server_reads_and_writes_back_unchanged() {
        let t: Timestamp = "2026-12-05T13:00:00.987654321Z".parse().unwrap();
        let micro = k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime(t);
        let written = serde_json::to_value(&micro).unwrap();
        let written = written.as_str().unwrap();
        assert_eq!(normalize(written).unwrap(), written);
        let back: k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime =
            serde_json::from_value(serde_json::json!(normalize(written).unwrap())).unwrap();
        assert_eq!(format(back.0), written);
    }

    #[test]
    fn a_time_without_six_fractional_digits_is_refused_in_gos_words() {
        assert_eq!(
            normalize("2026-12-05T13:00:00Z").unwrap_err(),
            "parsing time \"2026-12-05T13:00:00Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"Z\" as \".000000\""
        );
        assert_eq!(
            normalize("2026-12-05T13:00:00.123Z").unwrap_err(),
            "parsing time \"2026-12-05T13:00:00.123Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \".123Z\" as \".000000\""
        );
        assert_eq!(
            normalize("2026-12-05T13:00:00.123456789Z").unwrap_err(),
            "parsing time \"2026-12-05T13:00:00.123456789Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"789Z\" as \"Z07:00\""
        );
    }

    #[test]
    fn impossible_dates_and_trailing_text_are_refused() {
        assert_eq!(
            normalize("2026-02-30T13:00:00.000000Z").unwrap_err(),
            "parsing time \"2026-02-30T13:00:00.000000Z\": day out of range"
        );
        assert_eq!(
            normalize("2026-13-01T13:00:00.000000Z").unwrap_err(),
            "parsing time \"2026-13-01T13:00:00.000000Z\": month out of range"
        );
        assert_eq!(
            normalize("2026-12-05T13:00:00.000000Zjunk").unwrap_err(),
            "parsing time \"2026-12-05T13:00:00.000000Zjunk\": extra text: \"junk\""
        );
        assert!(normalize("yesterday").unwrap_err().contains("as \"2006\""));
    }
}
