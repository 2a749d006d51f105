//! JSON that stays inert when printed on a terminal. serde_json escapes C0 controls but writes
//! C1 controls, DEL and bidirectional overrides as they are: a status document with a hostile
//! event message could still act on the terminal that shows it. Here they are `\uXXXX` too; the
//! document means the same to any JSON reader.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

use super::{is_bidi_override, is_c1};

/// `value` as pretty-printed, inert JSON.
pub fn to_json_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write(value, PrettyFormatter::new())
}

/// `value` as one line of inert JSON.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write(value, CompactFormatter)
}

fn write<T: Serialize + ?Sized, F: Formatter>(
    value: &T,
    formatter: F,
) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Inert(formatter));
    value.serialize(&mut ser)?;
    // The serializer writes only UTF-8 (input strings, ASCII escapes and punctuation).
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// A formatter that escapes what a terminal would act on, and otherwise lays out as `F` does.
struct Inert<F>(F);

fn must_escape(c: char) -> bool {
    c == '\u{7f}' || is_c1(c) || is_bidi_override(c)
}

impl<F: Formatter> Formatter for Inert<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices().filter(|(_, c)| must_escape(*c)) {
            writer.write_all(&fragment.as_bytes()[start..i])?;
            write!(writer, "\\u{:04x}", c as u32)?;
            start = i + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c1_del_and_bidi_are_escaped_and_mean_the_same() {
        let hostile = "osc\u{9d}52 \u{202e}gpj.exe del\u{7f} esc\u{1b}[2J é";
        let value = serde_json::json!({ "message": hostile, "list": [hostile] });
        for text in [to_json(&value).unwrap(), to_json_pretty(&value).unwrap()] {
            assert!(super::super::is_inert(&text.replace('\n', "")), "{text}");
            assert!(
                text.contains("\\u009d") && text.contains("\\u202e") && text.contains("\\u007f")
            );
            assert!(text.contains('é'), "printable text stays as it is: {text}");
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, value);
        }
    }

    #[test]
    fn pretty_layout_is_serde_jsons() {
        let value = serde_json::json!({"a": [1, {"b": null}], "c": "d"});
        assert_eq!(
            to_json_pretty(&value).unwrap(),
            serde_json::to_string_pretty(&value).unwrap()
        );
        assert_eq!(
            to_json(&value).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
    }
}
