//! The saved log and its cursor: what a session leaves on disk is what the next one resumes
//! from, even when the first died between two cursor writes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry::k8s::logs::lines::Cursor;
use gantry::k8s::logs::sink::PodSink;

fn cursor(ts: i128, at_ts: u32) -> Cursor {
    Cursor {
        ts: Some(ts),
        at_ts,
        partial: 0,
    }
}

#[test]
fn a_dropped_sink_records_its_cursor_and_length() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (mut sink, start) = PodSink::open(dir.path(), "pod-a").unwrap();
        assert_eq!(start, Cursor::default());
        sink.append(b"one\n", cursor(10, 1)).unwrap();
        sink.append(b"two\n", cursor(11, 1)).unwrap();
    }
    let recorded = std::fs::read_to_string(dir.path().join(".pod-a.cursor")).unwrap();
    assert_eq!(recorded, "11 1 0 8\n");
    let (mut sink, resumed) = PodSink::open(dir.path(), "pod-a").unwrap();
    assert_eq!(resumed, cursor(11, 1));
    sink.append(b"three\n", cursor(12, 1)).unwrap();
    drop(sink);
    assert_eq!(
        std::fs::read(dir.path().join("pod-a.log")).unwrap(),
        b"one\ntwo\nthree\n"
    );
}

#[test]
fn bytes_past_the_recorded_cursor_are_cut_and_read_again() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (mut sink, _) = PodSink::open(dir.path(), "pod-b").unwrap();
        sink.append(b"one\n", cursor(10, 1)).unwrap();
        sink.write_cursor().unwrap();
        sink.append(b"two\n", cursor(11, 1)).unwrap();
        // The session dies before the next cursor write.
        std::mem::forget(sink);
    }
    let (_sink, resumed) = PodSink::open(dir.path(), "pod-b").unwrap();
    assert_eq!(resumed, cursor(10, 1));
    assert_eq!(
        std::fs::read(dir.path().join("pod-b.log")).unwrap(),
        b"one\n"
    );
}

#[test]
fn an_old_cursor_vouches_for_the_whole_file_and_a_short_file_starts_again() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("old.log"), b"one\ntwo\n").unwrap();
    std::fs::write(dir.path().join(".old.cursor"), "11 1 0\n").unwrap();
    let (_sink, resumed) = PodSink::open(dir.path(), "old").unwrap();
    assert_eq!(resumed, cursor(11, 1));
    assert_eq!(
        std::fs::read(dir.path().join("old.log")).unwrap(),
        b"one\ntwo\n"
    );

    std::fs::write(dir.path().join("short.log"), b"one\n").unwrap();
    std::fs::write(dir.path().join(".short.cursor"), "11 1 0 8\n").unwrap();
    let (_sink, resumed) = PodSink::open(dir.path(), "short").unwrap();
    assert_eq!(resumed, Cursor::default());
    assert_eq!(std::fs::read(dir.path().join("short.log")).unwrap(), b"");
}
