//! The log line reader: whatever the chunking, cuts and reconnects, every line is shown once
//! and saved once, byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry::k8s::logs::lines::{Cursor, FRAGMENT_BYTES, LineReader, Output};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Line {
    ts: i128,
    text: Vec<u8>,
}

const BASE: i128 = 1_700_000_000_000_000_000;

fn stamp(ts: i128) -> String {
    jiff::Timestamp::from_nanosecond(ts).unwrap().to_string()
}

/// What the server sends from `since` (whole seconds, as the API has it).
fn serve(lines: &[Line], since: Option<jiff::Timestamp>) -> Vec<u8> {
    let from = since.map_or(i128::MIN, |t| t.as_nanosecond());
    let mut out = Vec::new();
    for l in lines.iter().filter(|l| l.ts >= from) {
        out.extend_from_slice(stamp(l.ts).as_bytes());
        out.push(b' ');
        out.extend_from_slice(&l.text);
        out.push(b'\n');
    }
    out
}

fn expected_file(lines: &[Line]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|l| l.text.iter().copied().chain([b'\n']))
        .collect()
}

/// Joins fragments back into lines.
fn join(shown: &[gantry::k8s::logs::LogLine]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for l in shown {
        cur.extend_from_slice(&l.bytes);
        if !l.continues {
            out.push(std::mem::take(&mut cur));
        }
    }
    out
}

/// Feeds a log through connections cut at `cuts` (byte offsets into each connection's
/// response), chunked by `chunk`.
fn run(
    lines: &[Line],
    reader: &mut LineReader,
    cuts: &[usize],
    chunk: usize,
    shown: &mut Vec<gantry::k8s::logs::LogLine>,
    saved: &mut Vec<u8>,
) {
    let mut cuts = cuts.iter();
    loop {
        let body = serve(lines, reader.cursor().since());
        let cut = cuts.next().map(|c| c % (body.len() + 1));
        let end = cut.unwrap_or(body.len());
        for piece in body[..end].chunks(chunk.max(1)) {
            let mut out = Output::default();
            reader.push(piece, &mut out);
            shown.extend(out.lines);
            saved.extend(out.save);
        }
        reader.reconnect();
        if cut.is_none() {
            return;
        }
    }
}

fn arb_lines() -> impl Strategy<Value = Vec<Line>> {
    prop::collection::vec(
        (
            0u8..4,
            prop::collection::vec(
                any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
                0..40,
            ),
        ),
        0..60,
    )
    .prop_map(|items| {
        let mut ts = BASE;
        items
            .into_iter()
            .map(|(step, text)| {
                // 0: the same nanosecond as the line before (possible on a real kubelet);
                // otherwise forward by up to ~0.7 s, so lines share and cross seconds.
                ts += i128::from(step) * 230_000_017;
                Line { ts, text }
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn every_line_once_across_cuts(
        lines in arb_lines(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
        chunk in 1usize..50,
    ) {
        let mut reader = LineReader::new(Some(Cursor::default()));
        let (mut shown, mut saved) = (Vec::new(), Vec::new());
        run(&lines, &mut reader, &cuts, chunk, &mut shown, &mut saved);
        let want: Vec<Vec<u8>> = lines.iter().map(|l| l.text.clone()).collect();
        prop_assert_eq!(join(&shown), want);
        prop_assert_eq!(saved, expected_file(&lines));
    }

    #[test]
    fn a_second_session_shows_all_but_saves_only_the_rest(
        lines in arb_lines(),
        first_cut in any::<usize>(),
        cuts in prop::collection::vec(any::<usize>(), 0..4),
        chunk in 1usize..50,
    ) {
        let mut first = LineReader::new(Some(Cursor::default()));
        let (mut shown, mut saved) = (Vec::new(), Vec::new());
        // The first session ends mid-stream (the program quit).
        let body = serve(&lines, None);
        let end = first_cut % (body.len() + 1);
        for piece in body[..end].chunks(chunk) {
            let mut out = Output::default();
            first.push(piece, &mut out);
            saved.extend(out.save);
        }
        let on_disk = Cursor::decode(&first.saved_cursor().unwrap().encode()).unwrap_or_default();
        let mut second = LineReader::new(Some(on_disk));
        run(&lines, &mut second, &cuts, chunk, &mut shown, &mut saved);
        let want: Vec<Vec<u8>> = lines.iter().map(|l| l.text.clone()).collect();
        prop_assert_eq!(join(&shown), want);
        prop_assert_eq!(saved, expected_file(&lines));
    }
}

#[test]
fn long_lines_come_in_fragments_and_resume_mid_line() {
    let big: Vec<u8> = (0..FRAGMENT_BYTES * 3 + 17)
        .map(|i| match (i % 251) as u8 {
            b'\n' => b'x',
            b => b,
        })
        .collect();
    let lines = vec![
        Line {
            ts: BASE,
            text: b"before".to_vec(),
        },
        Line {
            ts: BASE + 5,
            text: big.clone(),
        },
        Line {
            ts: BASE + 9,
            text: b"after".to_vec(),
        },
    ];
    let mut reader = LineReader::new(Some(Cursor::default()));
    let (mut shown, mut saved) = (Vec::new(), Vec::new());
    // Cut inside the big line, after its first fragment went out.
    run(
        &lines,
        &mut reader,
        &[FRAGMENT_BYTES + 4096, FRAGMENT_BYTES * 2 + 100],
        8192,
        &mut shown,
        &mut saved,
    );
    assert!(shown.iter().all(|l| l.bytes.len() <= FRAGMENT_BYTES));
    assert!(shown.iter().any(|l| l.continues));
    assert_eq!(
        join(&shown),
        vec![b"before".to_vec(), big, b"after".to_vec()]
    );
    assert_eq!(saved, expected_file(&lines));
}

#[test]
fn lines_without_timestamps_pass_through() {
    let mut reader = LineReader::new(None);
    let mut out = Output::default();
    reader.push(b"no-timestamp-here\nnot a time either\n", &mut out);
    let texts: Vec<&[u8]> = out.lines.iter().map(|l| l.bytes.as_ref()).collect();
    assert_eq!(
        texts,
        [&b"no-timestamp-here"[..], &b"not a time either"[..]]
    );
    assert!(out.save.is_empty());
    assert!(out.lines.iter().all(|l| l.ts.is_none()));
}

#[test]
fn since_rounds_down_to_the_second() {
    let c = Cursor {
        ts: Some(BASE + 999_999_999),
        at_ts: 1,
        partial: 0,
    };
    assert_eq!(c.since().unwrap().as_nanosecond(), BASE);
    assert_eq!(Cursor::decode(&c.encode()), Some(c));
}

proptest! {
    /// The cached parse agrees with a full RFC 3339 parse on every shape the kubelet writes
    /// (trailing zeros trimmed) and on near misses, whatever came before.
    #[test]
    fn timestamp_cache_agrees_with_a_full_parse(
        stamps in prop::collection::vec((0i128..4_000_000_000_000_000_000, 0usize..4), 1..40),
    ) {
        let mut cache = gantry::k8s::logs::timestamp::TimestampCache::default();
        for (ts, shape) in stamps {
            let text = match shape {
                0 => stamp(ts),
                1 => stamp(ts - ts.rem_euclid(1_000_000_000)),
                2 => stamp(ts).replace('Z', "+00:00"),
                _ => format!("{}x", stamp(ts)),
            };
            let expected = text.parse::<jiff::Timestamp>().ok().map(|t| t.as_nanosecond());
            prop_assert_eq!(cache.parse(text.as_bytes()), expected, "{}", text);
        }
    }
}

#[test]
fn timestamp_cache_reads_fractions_of_any_length() {
    let mut cache = gantry::k8s::logs::timestamp::TimestampCache::default();
    let second = "2026-12-03T01:02:03Z"
        .parse::<jiff::Timestamp>()
        .unwrap()
        .as_nanosecond();
    assert_eq!(cache.parse(b"2026-12-03T01:02:03Z"), Some(second));
    assert_eq!(
        cache.parse(b"2026-12-03T01:02:03.5Z"),
        Some(second + 500_000_000)
    );
    assert_eq!(
        cache.parse(b"2026-12-03T01:02:03.000000001Z"),
        Some(second + 1)
    );
    assert_eq!(cache.parse(b"2026-12-03T01:02:03.1234567890Z"), None);
    assert_eq!(cache.parse(b"2026-12-03T01:02:03.12a4Z"), None);
    assert_eq!(
        cache.parse(b"2026-12-03T01:02:04Z"),
        Some(second + 1_000_000_000)
    );
}
