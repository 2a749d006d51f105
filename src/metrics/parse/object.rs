//! Objects on a line: a JSON object (JSON-lines loggers; Python's `json` writes `NaN`,
//! `Infinity` and `-Infinity`, which JSON has not) or a Python dict as Hugging Face's Trainer
//! prints it: `{'loss': 0.1234, 'grad_norm': 1.92, 'learning_rate': 4.9e-05, 'epoch': 0.5}`.
//! Numeric values are metrics (and strings that hold one number: fairseq writes its values so);
//! nested JSON objects give `outer/inner` names; other strings, lists and
//! booleans are skipped.

use std::fmt;

use memchr::memmem;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::Format;
use super::found::{Found, MAX_METRICS};
use crate::metrics::number::{Style, is_word_byte, number_at};

/// Nested objects deeper than this are skipped.
const MAX_DEPTH: usize = 3;

/// Reads the object opening at `text[open]`; `None` when there is none there or it has nothing.
pub(crate) fn read(
    text: &[u8],
    open: usize,
    arena: &mut String,
    found: &mut Found,
) -> Option<Format> {
    let first = text[open + 1..].iter().find(|b| !b.is_ascii_whitespace())?;
    if *first == b'"' && json(&text[open..], arena, found) {
        return Some(Format::Json);
    }
    found.clear();
    if matches!(first, b'\'' | b'"') && pydict(text, open, found) && !found.is_empty() {
        return Some(Format::PyDict);
    }
    None
}

fn json(text: &[u8], arena: &mut String, found: &mut Found) -> bool {
    let mut walk = Walk {
        path: String::new(),
        depth: 0,
        python: false,
        arena,
        found,
    };
    let read = |bytes: &[u8], walk: &mut Walk<'_>| {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        serde::de::DeserializeSeed::deserialize(&mut *walk, &mut de).is_ok()
    };
    if !read(text, &mut walk) {
        if memmem::find(text, b"NaN").is_none() && memmem::find(text, b"Infinity").is_none() {
            return false;
        }
        walk.found.clear();
        walk.python = true;
        if !read(&quote_non_finite(text), &mut walk) {
            return false;
        }
    }
    !walk.found.is_empty()
}

/// A walk through a JSON object in its own order (serde_json's `Value` would sort the keys),
/// recording its numbers as it goes.
struct Walk<'s> {
    /// `outer/inner/` above the current object.
    path: String,
    depth: usize,
    /// Strings `NaN`, `Infinity`, `-Infinity` stand for the bare words Python wrote.
    python: bool,
    arena: &'s mut String,
    found: &'s mut Found,
}

impl Walk<'_> {
    fn number(&mut self, key: &str, value: f64) {
        if self.found.metrics.len() >= MAX_METRICS {
            return;
        }
        self.arena.clear();
        self.arena.push_str(&self.path);
        self.arena.push_str(key);
        self.found.record(self.arena.as_bytes(), value);
    }
}

impl<'de> DeserializeSeed<'de> for &mut Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for &mut Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            map.next_value_seed(Member {
                walk: &mut *self,
                key: &key,
            })?;
        }
        Ok(())
    }
}

/// One member's value: a number is recorded, an object walked, anything else skipped.
struct Member<'a, 's> {
    walk: &'a mut Walk<'s>,
    key: &'a str,
}

impl<'de> DeserializeSeed<'de> for Member<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Member<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        self.walk.number(self.key, v);
        Ok(())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.visit_f64(v as f64)
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.visit_f64(v as f64)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        let value = match v {
            "NaN" | "Infinity" | "-Infinity" if !self.walk.python => return Ok(()),
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            // fairseq's JSON log writes every value as a string (`"loss": "12.846"`).
            _ => match number_at(v.as_bytes(), 0, Style::Literal) {
                Some((value, end)) if end == v.len() && value.is_finite() => value,
                _ => return Ok(()),
            },
        };
        self.walk.number(self.key, value);
        Ok(())
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if self.walk.depth >= MAX_DEPTH {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(());
        }
        let len = self.walk.path.len();
        self.walk.path.push_str(self.key);
        self.walk.path.push('/');
        self.walk.depth += 1;
        let result = self.walk.visit_map(map);
        self.walk.depth -= 1;
        self.walk.path.truncate(len);
        result
    }
}

/// The object with Python's bare `NaN`, `Infinity` and `-Infinity` quoted, so that it is JSON;
/// the walk reads those strings back as numbers.
fn quote_non_finite(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 16);
    let (mut i, mut in_string) = (0, false);
    while i < text.len() {
        let b = text[i];
        if in_string {
            out.push(b);
            match b {
                b'\\' => {
                    out.extend(text.get(i + 1));
                    i += 1;
                }
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        let word = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|w| text[i..].starts_with(w.as_bytes()));
        match word {
            Some(w) => {
                out.push(b'"');
                out.extend_from_slice(w.as_bytes());
                out.push(b'"');
                i += w.len();
            }
            None => {
                in_string = b == b'"';
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// Reads a Python dict repr opening at `text[open]`; on any surprise, nothing is kept.
fn pydict(text: &[u8], open: usize, found: &mut Found) -> bool {
    let ok = pydict_items(text, open + 1, found).is_some();
    if !ok {
        found.clear();
    }
    ok
}

fn pydict_items(s: &[u8], mut i: usize, found: &mut Found) -> Option<()> {
    loop {
        i = skip_space(s, i);
        if s.get(i) == Some(&b'}') {
            return Some(());
        }
        let quote = *s.get(i).filter(|&&b| b == b'\'' || b == b'"')?;
        let key_end = string_end(s, i + 1, quote)?;
        let key = (i + 1, key_end);
        i = skip_space(s, key_end + 1);
        if s.get(i) != Some(&b':') {
            return None;
        }
        i = skip_space(s, i + 1);
        let (value, next) = pyvalue(s, i)?;
        if let Some(value) = value {
            found.record(&s[key.0..key.1], value);
        }
        i = skip_space(s, next);
        match s.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return Some(()),
            _ => return None,
        }
    }
}

/// A value: a number (kept), or a string, a nested container, `True`/`None` or a call such as
/// `np.float64(0.5)` or `tensor(1.92, device='cuda:0')` (whose first argument is kept).
fn pyvalue(s: &[u8], i: usize) -> Option<(Option<f64>, usize)> {
    if let Some((value, end)) = number_at(s, i, Style::Literal) {
        return Some((Some(value), end));
    }
    match *s.get(i)? {
        q @ (b'\'' | b'"') => Some((None, string_end(s, i + 1, q)? + 1)),
        b'{' | b'[' | b'(' => Some((None, container_end(s, i)?)),
        b if is_word_byte(b) => {
            let name_end = i + s[i..]
                .iter()
                .take_while(|&&b| is_word_byte(b) || b == b'.')
                .count();
            if s.get(name_end) != Some(&b'(') {
                return Some((None, name_end));
            }
            let value = number_at(s, skip_space(s, name_end + 1), Style::Literal).map(|(v, _)| v);
            Some((value, container_end(s, name_end)?))
        }
        _ => None,
    }
}

fn skip_space(s: &[u8], mut i: usize) -> usize {
    while s.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// Index of the quote closing a string whose body starts at `i`.
fn string_end(s: &[u8], mut i: usize, quote: u8) -> Option<usize> {
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b if b == quote => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Just past the bracket closing the one at `s[i]`, strings inside skipped.
fn container_end(s: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i < s.len() {
        match s[i] {
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            q @ (b'\'' | b'"') => i = string_end(s, i + 1, q)?,
            _ => {}
        }
        i += 1;
    }
    None
}
