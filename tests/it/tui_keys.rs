//! One viewer's keys over a model (`App::on_key`, `App::update` with plain values, no runtime,
//! no cluster): quitting, help, focus, selection, scrolling by line and page, following a pod,
//! a previous container or every pod, toggles, search.
// Helpers outside #[test] functions unwrap too (clippy.toml allows it only inside them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::tui as common_tui;

use common_tui::*;
use crossterm::event::KeyCode;
use gantry::app::{Focus, Overlay};
use gantry::keys::Action;

// ---------------------------------------------------------------------------------------------
// Plain actions

#[test]
fn q_and_ctrl_c_quit() {
    let mut app = running(false);
    assert!(app.on_key(key('q')).is_empty());
    assert!(app.should_quit);

    let mut app = running(false);
    assert!(app.on_key(ctrl('c')).is_empty());
    assert!(app.should_quit);

    let mut app = running(false);
    assert!(app.update(Action::Quit).is_empty());
    assert!(app.should_quit);
}

#[test]
fn a_key_bound_to_nothing_asks_for_no_frame_and_a_bound_key_or_a_typed_one_does() {
    let mut app = running(false);
    app.dirty = false;
    assert!(app.on_key(key('y')).is_empty());
    assert!(
        !app.dirty,
        "an unbound key changed nothing: nothing to draw"
    );
    app.on_key(key('?'));
    assert!(app.dirty);
    app.on_key(code(KeyCode::Esc));
    app.on_key(key('/'));
    app.dirty = false;
    app.on_key(key('y'));
    assert!(app.dirty, "typed into the search prompt");
    assert_eq!(app.logs.typing.as_deref(), Some("y"));
}

#[test]
fn help_toggles_and_esc_closes_it() {
    let mut app = running(false);
    app.on_key(key('?'));
    assert_eq!(app.overlay, Some(Overlay::Help));
    app.on_key(key('?'));
    assert_eq!(app.overlay, None);
    app.on_key(key('?'));
    app.on_key(code(KeyCode::Esc));
    assert_eq!(app.overlay, None);
    assert!(!app.should_quit);
}

#[test]
fn close_without_an_overlay_clears_the_search() {
    let mut app = with_attempts(false);
    app.logs.search = Some("loss".into());
    app.update(Action::Help);
    app.update(Action::Close);
    assert_eq!(app.overlay, None);
    assert_eq!(
        app.logs.search.as_deref(),
        Some("loss"),
        "the first Esc only closes the overlay"
    );
    app.update(Action::Close);
    assert_eq!(app.logs.search, None);
}

#[test]
fn tab_and_shift_tab_cycle_the_focus() {
    let mut app = running(false);
    assert_eq!(app.focus, Focus::Pods);
    let mut seen = Vec::new();
    for _ in 0..4 {
        app.on_key(code(KeyCode::Tab));
        seen.push(app.focus);
    }
    assert_eq!(seen, [Focus::Logs, Focus::Events, Focus::Jobs, Focus::Pods]);
    seen.clear();
    for _ in 0..4 {
        app.on_key(code(KeyCode::BackTab));
        seen.push(app.focus);
    }
    assert_eq!(seen, [Focus::Jobs, Focus::Events, Focus::Logs, Focus::Pods]);
}

#[test]
fn up_and_down_in_the_pods_pane_move_the_pod_selection_and_stop_at_the_ends() {
    let mut app = with_attempts(false);
    assert_eq!(app.focus, Focus::Pods);
    let selected = |app: &Tui| app.selection.pod(&app.model.jobs).map(|p| p.name.clone());
    assert_eq!(selected(&app).as_deref(), Some(POD_RUNNING));
    assert!(
        app.on_key(key('j')).is_empty(),
        "moving a pod follows nothing"
    );
    assert_eq!(selected(&app).as_deref(), Some(POD_IMAGE));
    app.on_key(code(KeyCode::Down));
    assert_eq!(selected(&app).as_deref(), Some(POD_OOM));
    app.on_key(key('j'));
    assert_eq!(
        selected(&app).as_deref(),
        Some(POD_OOM),
        "clamped at the end"
    );
    app.on_key(key('k'));
    app.on_key(code(KeyCode::Up));
    app.on_key(key('k'));
    assert_eq!(
        selected(&app).as_deref(),
        Some(POD_RUNNING),
        "clamped at the top"
    );
    assert_eq!(
        app.logs.label(&app.model),
        "all pods",
        "the logs did not move"
    );
}

#[test]
fn up_and_down_in_the_jobs_pane_select_an_attempt_and_show_its_logs() {
    let mut app = with_attempts(false);
    app.on_key(code(KeyCode::BackTab));
    assert_eq!(app.focus, Focus::Jobs);
    let store = app.model.logs.generation;
    let current = |app: &Tui| {
        app.selection
            .attempt(&app.model.jobs)
            .map(|a| a.name.clone())
    };
    assert_eq!(current(&app).as_deref(), Some(ATTEMPT_2));

    // An older attempt is not in the engine's store: this viewer fetches it for itself.
    assert_eq!(app.on_key(key('k')), [fetch(ATTEMPT_1, None, false, 1)]);
    assert_eq!(current(&app).as_deref(), Some(ATTEMPT_1));
    let pods: Vec<&str> = app
        .selection
        .pods(&app.model.jobs)
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(
        pods, FAILED_PODS,
        "the pods pane shows the selected attempt"
    );
    assert!(
        app.shown_texts().is_empty(),
        "the fetch has sent nothing yet"
    );
    assert!(
        !app.model.logs.lines.is_empty(),
        "the engine's store still holds the newest attempt's lines"
    );
    fetched_lines(&mut app, FAILED_PODS[0], vec![line("Traceback")]);
    assert_eq!(app.shown_texts(), ["Traceback"]);

    assert!(
        app.on_key(key('k')).is_empty(),
        "already at the first attempt: nothing to fetch"
    );
    // Back on the newest attempt: the engine's store again, no fetch.
    assert!(app.on_key(code(KeyCode::Down)).is_empty());
    assert!(app.logs.fetched.is_none());
    assert_eq!(app.shown_texts().len(), app.model.logs.lines.len());
    assert_eq!(app.model.logs.generation, store, "the store never moved");
    assert!(app.on_key(key('j')).is_empty());
}

#[test]
fn up_and_down_in_the_logs_pane_scroll_the_logs() {
    let mut app = with_attempts(false);
    app.focus = Focus::Logs;
    let last = bottom_line(&app);
    assert!(app.logs.follow);

    app.on_key(key('k'));
    assert_eq!(app.scrolled(), 1, "k scrolls one line up");
    assert!(!app.logs.follow, "scrolled back: paused");
    assert_ne!(bottom_line(&app), last);
    app.on_key(code(KeyCode::Up));
    assert_eq!(app.scrolled(), 2);

    app.on_key(key('j'));
    app.on_key(code(KeyCode::Down));
    assert_eq!(app.scrolled(), 0);
    assert!(app.logs.follow, "back at the bottom: following again");
    assert_eq!(bottom_line(&app), last);

    // The events pane has no cursor: j/k scroll the logs there too.
    app.focus = Focus::Events;
    app.on_key(key('k'));
    assert_eq!(app.scrolled(), 1);
}

#[test]
fn up_and_down_in_the_logs_pane_change_the_scroll_and_follow() {
    // j/k in the logs pane scroll by one line (k back, away from the newest; j forward),
    // pause following when off the bottom, and never follow anything new.
    let mut app = with_attempts(false);
    app.focus = Focus::Logs;
    app.log_rows = 4;
    app.update(Action::PageUp);
    let scroll = app.scrolled();
    assert!(app.on_key(key('k')).is_empty());
    assert_eq!(app.scrolled(), scroll + 1, "k goes one line further back");
    assert!(app.on_key(key('j')).is_empty());
    assert_eq!(app.scrolled(), scroll, "j undoes k");
    assert_eq!(app.logs.follow, app.scrolled() == 0);
}

#[test]
fn page_up_and_down_scroll_by_the_rows_the_pane_showed() {
    let mut app = with_attempts(false);
    let held = app.model.logs.lines.len();
    assert_eq!(held, 11);
    app.log_rows = 4;
    app.on_key(code(KeyCode::PageUp));
    assert_eq!(app.scrolled(), 4);
    assert!(!app.logs.follow);
    app.on_key(ctrl('b'));
    assert_eq!(app.scrolled(), 8);
    app.on_key(code(KeyCode::PageUp));
    assert_eq!(app.scrolled(), held - 1, "stops at the first line");
    app.on_key(code(KeyCode::PageDown));
    assert_eq!(app.scrolled(), held - 1 - 4);
    app.on_key(ctrl('f'));
    app.on_key(code(KeyCode::PageDown));
    assert_eq!(app.scrolled(), 0);
    assert!(app.logs.follow, "paging to the bottom follows again");
}

#[test]
fn top_and_bottom() {
    let mut app = with_attempts(false);
    let first = app.model.logs.lines.get(0).unwrap().text.to_string();
    let last = bottom_line(&app);
    app.on_key(key('g'));
    assert_eq!(bottom_line(&app), first);
    assert!(!app.logs.follow);
    app.on_key(key('G'));
    assert_eq!(bottom_line(&app), last);
    assert!(app.logs.follow);
    app.on_key(code(KeyCode::Home));
    assert_eq!(app.scrolled(), app.model.logs.lines.len() - 1);
    app.on_key(code(KeyCode::End));
    assert_eq!(app.scrolled(), 0);
}

#[test]
fn enter_p_and_a_show_the_selected_pod_its_previous_container_or_all_pods() {
    let mut app = with_attempts(false);
    let store = app.model.logs.generation;
    // The newest attempt's pod: its lines of the engine's store, nothing fetched.
    assert!(app.on_key(code(KeyCode::Enter)).is_empty());
    assert_eq!(app.logs.label(&app.model), POD_RUNNING);
    let only_running = app.shown_texts();
    assert_eq!(only_running.len(), training_lines().len());
    assert!(
        only_running.iter().all(|t| !t.contains("CUDA")),
        "{only_running:?}"
    );

    app.on_key(key('j'));
    app.on_key(key('j'));
    // A previous container is not in the store: fetched for this viewer.
    assert_eq!(
        app.on_key(key('p')),
        [fetch(ATTEMPT_2, Some(POD_OOM), true, 1)]
    );
    assert_eq!(app.logs.label(&app.model), format!("{POD_OOM} (previous)"));

    assert!(app.on_key(key('a')).is_empty());
    assert_eq!(app.logs.label(&app.model), "all pods");
    assert!(app.logs.fetched.is_none(), "looking away drops the fetch");
    assert_eq!(app.model.logs.generation, store);
    assert!(app.logs.follow && app.scrolled() == 0);
}

#[test]
fn following_with_nothing_to_follow_says_why() {
    let mut app = running(false);
    assert!(app.on_key(code(KeyCode::Enter)).is_empty());
    assert_eq!(notice(&app), "no pod selected");
    assert!(app.on_key(key('p')).is_empty());
    assert_eq!(notice(&app), "no pod selected");
    assert!(app.on_key(key('a')).is_empty());
    assert_eq!(notice(&app), "no attempt yet");
    assert_eq!(app.model.logs.generation, 0);
}

#[test]
fn f_w_and_t_toggle() {
    let mut app = with_attempts(false);
    assert!(app.logs.follow && !app.logs.wrap && !app.logs.timestamps);
    app.on_key(key('f'));
    assert!(!app.logs.follow);
    app.on_key(key('f'));
    assert!(app.logs.follow);
    app.update(Action::PageUp);
    app.on_key(key('f'));
    assert!(app.logs.follow);
    assert_eq!(app.scrolled(), 0, "following again jumps to the bottom");

    app.on_key(key('w'));
    assert!(app.logs.wrap);
    app.on_key(key('w'));
    assert!(!app.logs.wrap);
    app.on_key(key('t'));
    assert!(app.logs.timestamps);
    app.on_key(key('t'));
    assert!(!app.logs.timestamps);
}

#[test]
fn search_is_typed_then_entered() {
    let mut app = with_attempts(false);
    assert!(app.on_key(key('/')).is_empty());
    assert_eq!(app.logs.typing.as_deref(), Some(""));
    // Keys go to the search, not to the keymap: q does not quit, l does not launch.
    assert!(type_text(&mut app, "qlossx").is_empty());
    assert!(!app.should_quit);
    assert_eq!(app.logs.typing.as_deref(), Some("qlossx"));
    app.on_key(code(KeyCode::Backspace));
    assert_eq!(app.logs.typing.as_deref(), Some("qloss"));
    app.on_key(code(KeyCode::Esc));
    assert_eq!(app.logs.typing, None, "Esc abandons the search being typed");
    assert_eq!(app.logs.search, None);
    assert!(app.logs.follow);

    app.on_key(key('/'));
    type_text(&mut app, "LOSS");
    assert!(app.on_key(code(KeyCode::Enter)).is_empty());
    assert_eq!(app.logs.typing, None);
    assert_eq!(app.logs.search.as_deref(), Some("LOSS"));
    // Enter jumps to the nearest match above the bottom (case-insensitive).
    assert_eq!(
        bottom_line(&app),
        "epoch 6/10 step 600 loss=0.8120 acc=0.702"
    );
    assert!(!app.logs.follow);

    app.on_key(key('/'));
    type_text(&mut app, "nowhere");
    app.on_key(code(KeyCode::Enter));
    assert_eq!(notice(&app), "no line contains \"nowhere\"");
    assert_eq!(app.logs.search.as_deref(), Some("nowhere"));

    app.on_key(key('/'));
    app.on_key(code(KeyCode::Enter));
    assert_eq!(app.logs.search, None, "an empty search clears it");
}

#[test]
fn n_and_shift_n_go_to_the_next_and_previous_match() {
    let mut app = with_attempts(false);
    assert!(app.on_key(key('n')).is_empty());
    assert_eq!(notice(&app), "no search: press / to search");
    app.on_key(key('N'));
    assert_eq!(notice(&app), "no search: press / to search");

    app.on_key(key('/'));
    type_text(&mut app, "loss=");
    app.on_key(code(KeyCode::Enter));
    assert_eq!(
        bottom_line(&app),
        "epoch 6/10 step 600 loss=0.8120 acc=0.702"
    );
    app.on_key(key('N'));
    assert_eq!(
        bottom_line(&app),
        "epoch 5/10 step 500 loss=0.9875 acc=0.644"
    );
    app.on_key(key('n'));
    assert_eq!(
        bottom_line(&app),
        "epoch 6/10 step 600 loss=0.8120 acc=0.702"
    );
    // Past the last match it wraps round to the first (the OOM-killed pod's line, held first).
    app.on_key(key('n'));
    assert_eq!(
        bottom_line(&app),
        "epoch 1/10 step 100 loss=2.3012 acc=0.112"
    );
    app.on_key(key('N'));
    assert_eq!(
        bottom_line(&app),
        "epoch 6/10 step 600 loss=0.8120 acc=0.702"
    );

    app.logs.search = Some("absent".into());
    app.on_key(key('n'));
    assert_eq!(notice(&app), "no more matches");
}
