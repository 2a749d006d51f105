//! Many viewers of one model: each keeps its own place in the logs, by absolute line number, over
//! the engine's single store; the store's memory does not grow with the viewers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::tui as common_tui;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common_tui::*;
use gantry::app::{App, Focus};
use gantry::config::Config;
use gantry::engine::{Report, World};
use gantry::k8s::logs::{LogLine, TailEvent};
use gantry::keys::{Action, Keymap};

/// Bytes this thread has on the heap, for the memory comparison (per thread: tests run side by
/// side).
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn live() -> isize {
    LIVE.with(Cell::get)
}

// SAFETY: every call is passed to the system allocator unchanged; only a counter is kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.with(|l| l.set(l.get() + layout.size() as isize));
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.with(|l| l.set(l.get() - layout.size() as isize));
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A batch of numbered lines from one pod, as the tail sends them.
fn batch(model: &World, from: u64, count: u64) -> Report {
    Report::Tail {
        generation: model.logs.generation,
        event: TailEvent::Lines {
            pod: POD_RUNNING.into(),
            lines: (from..from + count)
                .map(|n| line(&format!("step {n:06} loss=0.{n:06}")))
                .collect::<Vec<LogLine>>(),
        },
    }
}

fn viewer(model: &World) -> App {
    let mut app = App::new(Config::default(), Keymap::default(), false);
    app.on_model(model, &Default::default());
    app.focus = Focus::Logs;
    app
}

fn bottom(app: &App, model: &World) -> String {
    let shown = app.logs.shown(model);
    shown
        .bottom
        .and_then(|b| shown.store.lines.get(b))
        .map(|l| l.text.to_string())
        .unwrap()
}

#[test]
fn a_viewer_scrolled_back_keeps_its_lines_while_another_follows() {
    let mut state = with_attempts(false);
    let model = &mut state.model;
    let mut sent = 0;
    model.apply(batch(model, sent, 10_000));
    sent += 10_000;
    let mut reader = viewer(model);
    let mut follower = viewer(model);

    // Back 5,000 lines.
    reader.log_rows = 5_000;
    reader.update(Action::PageUp, model);
    let reading = bottom(&reader, model);
    assert!(!reader.logs.follow);

    // 90,000 more: the reader's line is still held, and still what it reads.
    for _ in 0..90 {
        model.apply(batch(model, sent, 1_000));
        sent += 1_000;
        reader.on_model(model, &Default::default());
        follower.on_model(model, &Default::default());
        assert_eq!(bottom(&reader, model), reading);
        assert_eq!(
            bottom(&follower, model),
            format!("step {:06} loss=0.{:06}", sent - 1, sent - 1)
        );
    }
    assert_eq!(reader.notice, None);

    // 10,000 more: the store (100,000 lines) lets the reader's line go. The reader is moved to
    // the oldest line held, and told.
    for _ in 0..10 {
        model.apply(batch(model, sent, 1_000));
        sent += 1_000;
        reader.on_model(model, &Default::default());
    }
    let oldest = model.logs.lines.get(0).unwrap().text.to_string();
    assert_eq!(bottom(&reader, model), oldest);
    assert!(
        reader
            .notice
            .as_ref()
            .is_some_and(|n| n.text.contains("left the buffer")),
        "{:?}",
        reader.notice
    );
    assert!(!reader.logs.follow);
}

/// Bytes the model and `viewers` viewers hold after 50,000 lines, each viewer taking every
/// change in as the engine tells it.
fn held_with(viewers: usize) -> isize {
    let mut state = with_attempts(false);
    let model = &mut state.model;
    let mut apps: Vec<App> = (0..viewers).map(|_| viewer(model)).collect();
    for (i, app) in apps.iter_mut().enumerate() {
        // Some follow, some are scrolled back, some look at one pod.
        match i % 3 {
            0 => {}
            1 => app.update(Action::PageUp, model).clear(),
            _ => app.logs.live(Some(POD_RUNNING.into())),
        }
    }
    let before = live();
    for n in 0..50 {
        model.apply(batch(model, n * 1_000, 1_000));
        for app in &mut apps {
            app.on_model(model, &Default::default());
        }
    }
    live() - before
}

#[test]
fn the_store_costs_the_same_with_one_viewer_or_sixteen() {
    let one = held_with(1);
    let sixteen = held_with(16);
    eprintln!("50,000 lines held: one viewer {one} bytes, sixteen viewers {sixteen} bytes");
    assert!(one > 1_000_000, "50,000 lines are held: {one} bytes");
    // Viewers hold places, not lines: sixteen of them add nothing per line.
    assert!(
        (sixteen - one).abs() < 64 * 1024,
        "one viewer: {one} bytes, sixteen: {sixteen}"
    );
}
