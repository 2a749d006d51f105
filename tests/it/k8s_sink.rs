//! The saved log and its cursor: what a session leaves on disk is what the next one resumes
//! from, even when the first died between two cursor writes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry::k8s::logs::lines::Cursor;
use std::io::Write;

use gantry::k8s::logs::sink::{PodSink, SinkError};

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
fn a_shorter_cursor_written_over_a_longer_one_is_read_as_itself() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (mut sink, _) = PodSink::open(dir.path(), "pod-a").unwrap();
        sink.append(b"one\n", cursor(10, 12)).unwrap();
        sink.write_cursor().unwrap();
        sink.append(b"two\n", cursor(11, 1)).unwrap();
    }
    // Written in place: the longer line's last bytes are still there, after the new one's end.
    let recorded = std::fs::read_to_string(dir.path().join(".pod-a.cursor")).unwrap();
    assert_eq!(recorded, "11 1 0 8\n\n");
    let (_sink, resumed) = PodSink::open(dir.path(), "pod-a").unwrap();
    assert_eq!(resumed, cursor(11, 1));
    assert_eq!(
        std::fs::read(dir.path().join("pod-a.log")).unwrap(),
        b"one\ntwo\n"
    );
}

#[test]
fn bytes_past_the_recorded_cursor_are_cut_and_read_again() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (mut sink, _) = PodSink::open(dir.path(), "pod-b").unwrap();
        sink.append(b"one\n", cursor(10, 1)).unwrap();
        sink.write_cursor().unwrap();
    }
    // A session that appended a line and died before its next cursor write (its lock went with
    // its file handle).
    std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join("pod-b.log"))
        .unwrap()
        .write_all(b"two\n")
        .unwrap();
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

#[test]
fn a_second_sink_on_the_same_file_is_refused_and_cuts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut first, _) = PodSink::open(dir.path(), "pod-c").unwrap();
    first.append(b"one\n", cursor(10, 1)).unwrap();
    first.write_cursor().unwrap();
    // Appended, its cursor not yet recorded: a second opener would cut it off.
    first.append(b"two\n", cursor(11, 1)).unwrap();
    // Another tail of the same pod: `gantry logs -f` beside the TUI, say.
    let second = PodSink::open(dir.path(), "pod-c");
    assert!(
        matches!(&second, Err(SinkError::Busy { path }) if path.ends_with("pod-c.log")),
        "{second:?}"
    );
    first.append(b"three\n", cursor(12, 1)).unwrap();
    drop(first);
    assert_eq!(
        std::fs::read(dir.path().join("pod-c.log")).unwrap(),
        b"one\ntwo\nthree\n"
    );
    // Free again once the first is done, from where it got.
    let (_sink, resumed) = PodSink::open(dir.path(), "pod-c").unwrap();
    assert_eq!(resumed, cursor(12, 1));
}
