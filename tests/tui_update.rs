//! One viewer (`App::update`, `App::on_key`) over a model fed the events workers send (`Model::apply`), with plain values: no runtime, no cluster.
// Helpers outside #[test] functions unwrap too (clippy.toml allows it only inside them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_tui;

use common_tui::*;
use crossterm::event::{KeyCode, KeyEvent};
use gantry::app::confirm::Answer;
use gantry::app::{Focus, Overlay};
use gantry::engine::model::FollowLogs;
use gantry::engine::model::cluster::ClusterPhase;
use gantry::engine::model::trouble::TroubleSource;
use gantry::engine::{Command, Event, Level};
use gantry::gke::{ClusterStatus, OperationKind, ProvisionEvent};
use gantry::k8s::logs::{StreamEnd, TailEvent};
use gantry::k8s::status::AttemptPhase;
use gantry::k8s::watch::{Change, JobWatchEvent};
use gantry::keys::Action;

/// The viewer's own fetch of an attempt's logs (not the newest attempt's, or a previous
/// container's).
fn fetch(attempt: &str, pod: Option<&str>, previous: bool, generation: u64) -> Command {
    Command::FetchLogs {
        attempt: attempt.into(),
        pod: pod.map(Into::into),
        previous,
        generation,
    }
}

/// What the engine follows into its store when an attempt is the newest.
fn store_follows(attempt: &str, generation: u64) -> FollowLogs {
    FollowLogs {
        attempt: attempt.into(),
        generation,
    }
}

fn texts(app: &Tui) -> Vec<String> {
    app.model
        .logs
        .lines
        .iter()
        .map(|e| e.text.to_string())
        .collect()
}

/// The text of the line at the bottom of the logs view.
fn bottom_line(app: &Tui) -> String {
    app.bottom_text().unwrap()
}

fn pod_names(app: &Tui) -> Vec<String> {
    app.model.jobs.pods.items.keys().cloned().collect()
}

fn is_confirm(app: &Tui) -> bool {
    matches!(app.overlay, Some(Overlay::Confirm(_)))
}

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
    // Holds whatever the direction (see the ignored test above): j/k in the logs pane scroll
    // by one line, pause following when off the bottom, and never follow anything new.
    let mut app = with_attempts(false);
    app.focus = Focus::Logs;
    app.log_rows = 4;
    app.update(Action::PageUp);
    let scroll = app.scrolled();
    assert!(app.on_key(key('k')).is_empty());
    let after_k = app.scrolled();
    assert_eq!(after_k.abs_diff(scroll), 1);
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

// ---------------------------------------------------------------------------------------------
// What cannot act now says why, and asks for nothing

fn refused(app: &mut Tui, k: KeyEvent) -> String {
    let before = app.overlay.clone();
    let commands = app.on_key(k);
    assert!(commands.is_empty(), "{k:?} asked for {commands:?}");
    assert_eq!(app.overlay, before, "{k:?} opened a dialog");
    let n = app.notice.clone().expect("a refusal says why");
    assert_eq!(n.level, Level::Warning, "{n:?}");
    n.text
}

#[test]
fn launch_before_the_cluster_runs_says_why() {
    let mut app = new_app(false);
    assert_eq!(app.model.cluster.phase(), ClusterPhase::Checking);
    assert_eq!(
        refused(&mut app, key('l')),
        "the cluster is not running yet (Checking)"
    );

    let mut app = not_created(false);
    assert_eq!(
        refused(&mut app, key('l')),
        "no cluster yet: press c to create it"
    );
    assert_eq!(
        refused(&mut app, key('r')),
        "no cluster yet: press c to create it"
    );

    let mut app = provisioning(false);
    assert_eq!(
        refused(&mut app, key('l')),
        "the cluster is not running yet (Provisioning)"
    );

    // RUNNING, but the Job watchers are not connected yet.
    let mut app = new_app(false);
    app.on_event(Event::Target(target()));
    app.on_event(Event::Cluster(cluster_summary(ClusterStatus::Running)));
    assert_eq!(refused(&mut app, key('l')), "connecting to the cluster…");
    app.on_event(Event::Connected);
    assert_eq!(app.on_key(key('l')), [Command::LaunchJob]);
}

#[test]
fn launch_and_retry_while_an_attempt_is_active_are_refused() {
    let mut app = with_attempts(false);
    let why = "attempt ml-training-job-2 is still running: wait for it to end, or delete it (d)";
    assert_eq!(refused(&mut app, key('l')), why);
    assert_eq!(refused(&mut app, key('r')), why);

    // A pending attempt counts as active too.
    let mut app = running(false);
    app.on_event(job_event(Change::Applied(attempt(
        ATTEMPT_1,
        1,
        AttemptPhase::Pending,
    ))));
    assert!(refused(&mut app, key('l')).contains("still running"));

    // Once it is being deleted it no longer blocks.
    let mut app = with_attempts(false);
    let mut deleting = running_attempt();
    deleting.deleting = true;
    app.on_event(job_event(Change::Applied(deleting)));
    assert_eq!(app.on_key(key('r')), [Command::RetryJob]);
}

#[test]
fn retry_without_an_attempt_says_why() {
    let mut app = running(false);
    assert_eq!(
        refused(&mut app, key('r')),
        "nothing to retry: press l to launch"
    );
}

#[test]
fn create_when_the_cluster_exists_is_refused() {
    let mut app = running(false);
    assert_eq!(
        refused(&mut app, key('c')),
        "the cluster already exists (Running)"
    );
    let mut app = provisioning(false);
    assert_eq!(
        refused(&mut app, key('c')),
        "the cluster already exists (Provisioning)"
    );
    let mut app = new_app(false);
    assert_eq!(
        refused(&mut app, key('c')),
        "still asking GKE about the cluster"
    );
}

#[test]
fn delete_cluster_when_there_is_none_or_it_is_going_is_refused() {
    let mut app = not_created(false);
    assert_eq!(refused(&mut app, key('X')), "there is no cluster to delete");
    let mut app = running(false);
    app.on_event(Event::Provision(ProvisionEvent::Started {
        kind: OperationKind::Delete,
        operation: "operation-2".into(),
    }));
    assert_eq!(app.model.cluster.phase(), ClusterPhase::Deleting);
    assert_eq!(
        refused(&mut app, key('X')),
        "the cluster is already being deleted"
    );
}

#[test]
fn cluster_keys_on_a_context_cluster_say_why() {
    let mut app = context_cluster(false);
    assert_eq!(refused(&mut app, key('X')), CONTEXT_REASON);
    assert_eq!(refused(&mut app, key('c')), CONTEXT_REASON);
    // The Job keys still work there.
    assert_eq!(app.on_key(key('l')), [Command::LaunchJob]);
}

#[test]
fn delete_outside_the_jobs_and_pods_panes_or_with_nothing_selected_says_why() {
    let mut app = with_attempts(false);
    app.focus = Focus::Logs;
    assert!(refused(&mut app, key('d')).starts_with("select an attempt (Jobs pane) or a pod"));
    app.focus = Focus::Events;
    assert!(refused(&mut app, key('d')).starts_with("select an attempt"));

    let mut app = running(false);
    app.focus = Focus::Pods;
    assert_eq!(refused(&mut app, key('d')), "no pod to delete");
    app.focus = Focus::Jobs;
    assert_eq!(refused(&mut app, key('d')), "no attempt to delete");
}

// ---------------------------------------------------------------------------------------------
// Confirm dialogs

#[test]
fn create_asks_with_the_spec_and_only_y_confirms() {
    let mut app = not_created(false);
    assert!(app.on_key(key('c')).is_empty());
    let Some(Overlay::Confirm(dialog)) = &app.overlay else {
        panic!("c opens a dialog: {:?}", app.overlay);
    };
    assert_eq!(dialog.title, "Create this GKE cluster? (y/N)");
    assert_eq!(dialog.answer, Answer::YesNo);
    let text = dialog.lines.join("\n");
    assert!(text.contains("ml-gke-cluster"), "{text}");
    assert!(text.contains(PLACE), "{text}");
    assert!(
        text.contains("3 × n1-standard-1 (100 GB pd-balanced)"),
        "{text}"
    );
    assert!(
        text.contains("compute, devstorage.read_only, logging.write, monitoring"),
        "{text}"
    );

    // Any other key cancels (q included: it is an answer here, not quit).
    assert!(app.on_key(key('q')).is_empty());
    assert!(!app.should_quit);
    assert_eq!(app.overlay, None);
    assert_eq!(notice(&app), "cancelled");

    app.on_key(key('c'));
    assert!(app.on_key(code(KeyCode::Esc)).is_empty());
    assert_eq!(app.overlay, None);

    app.on_key(key('c'));
    assert_eq!(app.on_key(key('Y')), [Command::CreateCluster]);
    assert_eq!(app.overlay, None);
}

#[test]
fn delete_cluster_needs_the_name_typed_exactly() {
    let mut app = running(false);
    app.on_key(key('X'));
    assert!(is_confirm(&app));
    // Typed keys are the answer: l, r and q do nothing else.
    assert!(type_text(&mut app, "ml-gke-clusterq").is_empty());
    assert!(!app.should_quit);
    let Some(Overlay::Confirm(dialog)) = &app.overlay else {
        panic!("still open");
    };
    assert_eq!(
        dialog.answer,
        Answer::TypeName {
            expected: CLUSTER.into(),
            typed: "ml-gke-clusterq".into()
        }
    );
    app.on_key(code(KeyCode::Backspace));
    assert_eq!(app.on_key(code(KeyCode::Enter)), [Command::DeleteCluster]);
    assert_eq!(app.overlay, None);

    // A wrong name cancels on Enter; Esc cancels at any time.
    let mut app = running(false);
    app.on_key(key('X'));
    type_text(&mut app, "ml-gke");
    assert!(app.on_key(code(KeyCode::Enter)).is_empty());
    assert_eq!(app.overlay, None);
    assert_eq!(notice(&app), "cancelled");
    app.on_key(key('X'));
    type_text(&mut app, CLUSTER);
    assert!(app.on_key(code(KeyCode::Esc)).is_empty());
    assert_eq!(app.overlay, None);
}

#[test]
fn d_asks_before_deleting_the_selected_attempt_or_pod() {
    let mut app = with_attempts(false);
    app.on_key(key('j'));
    app.on_key(key('d'));
    let Some(Overlay::Confirm(dialog)) = &app.overlay else {
        panic!("d opens a dialog");
    };
    assert_eq!(dialog.title, format!("Delete {POD_IMAGE}? (y/N)"));
    assert!(app.on_key(key('n')).is_empty());
    assert_eq!(app.overlay, None);
    app.on_key(key('d'));
    assert_eq!(app.on_key(key('y')), [Command::DeletePod(POD_IMAGE.into())]);

    app.focus = Focus::Jobs;
    app.on_key(key('k'));
    app.on_key(key('d'));
    assert_eq!(
        app.on_key(key('y')),
        [Command::DeleteAttempt(ATTEMPT_1.into())]
    );
}

// ---------------------------------------------------------------------------------------------
// Read-only: every mutating command, refused in one place

struct Mutation {
    state: fn(bool) -> Tui,
    focus: Focus,
    keys: Vec<KeyEvent>,
    expected: Command,
}

fn mutations() -> Vec<Mutation> {
    let mut delete_cluster = vec![key('X')];
    delete_cluster.extend(CLUSTER.chars().map(key));
    delete_cluster.push(code(KeyCode::Enter));
    vec![
        Mutation {
            state: not_created,
            focus: Focus::Pods,
            keys: vec![key('c'), key('y')],
            expected: Command::CreateCluster,
        },
        Mutation {
            state: running,
            focus: Focus::Pods,
            keys: delete_cluster,
            expected: Command::DeleteCluster,
        },
        Mutation {
            state: running,
            focus: Focus::Pods,
            keys: vec![key('l')],
            expected: Command::LaunchJob,
        },
        Mutation {
            state: with_failed_attempt,
            focus: Focus::Pods,
            keys: vec![key('r')],
            expected: Command::RetryJob,
        },
        Mutation {
            state: with_attempts,
            focus: Focus::Jobs,
            keys: vec![key('d'), key('y')],
            expected: Command::DeleteAttempt(ATTEMPT_2.into()),
        },
        Mutation {
            state: with_attempts,
            focus: Focus::Pods,
            keys: vec![key('d'), key('y')],
            expected: Command::DeletePod(POD_RUNNING.into()),
        },
    ]
}

#[test]
fn the_walk_covers_every_mutating_command() {
    let covered: Vec<std::mem::Discriminant<Command>> = mutations()
        .iter()
        .map(|m| std::mem::discriminant(&m.expected))
        .collect();
    for command in [
        Command::CreateCluster,
        Command::DeleteCluster,
        Command::LaunchJob,
        Command::RetryJob,
        Command::DeleteAttempt(String::new()),
        Command::DeletePod(String::new()),
    ] {
        assert!(command.mutates());
        assert!(
            covered.contains(&std::mem::discriminant(&command)),
            "{command:?} is not walked"
        );
    }
    assert!(!fetch("a", None, false, 1).mutates());
}

#[test]
fn writable_sessions_get_each_mutating_command_from_its_keys() {
    for m in mutations() {
        let mut app = (m.state)(false);
        app.focus = m.focus;
        let commands: Vec<Command> = m.keys.iter().flat_map(|k| app.on_key(*k)).collect();
        assert_eq!(
            commands,
            std::slice::from_ref(&m.expected),
            "keys {:?}",
            m.keys
        );
        assert_eq!(app.overlay, None);
        assert!(!notice(&app).contains("read-only"));
    }
}

#[test]
fn read_only_sessions_refuse_each_mutating_command_and_say_so() {
    for m in mutations() {
        let mut app = (m.state)(true);
        app.focus = m.focus;
        let (first, rest) = m.keys.split_first().unwrap();
        assert!(app.on_key(*first).is_empty(), "{:?}", m.expected);
        assert_eq!(app.overlay, None, "no dialog opens in read-only");
        let n = app.notice.clone().expect("the refusal says so");
        assert_eq!(n.level, Level::Warning);
        assert_eq!(
            n.text,
            format!("read-only: refused to {}", m.expected.describe())
        );
        // The rest of the sequence (the dialog's answer) goes to the keymap instead: still
        // nothing that changes the cloud.
        let later: Vec<Command> = rest.iter().flat_map(|k| app.on_key(*k)).collect();
        assert!(
            later.iter().all(|c| !c.mutates()),
            "{:?}: {later:?}",
            m.expected
        );
        assert!(!is_confirm(&app));
    }
}

#[test]
fn read_only_refuses_every_mutating_action_in_every_state_and_pane() {
    let states: [fn(bool) -> Tui; 5] = [
        not_created,
        provisioning,
        running,
        with_failed_attempt,
        with_attempts,
    ];
    for state in states {
        for focus in [Focus::Jobs, Focus::Pods, Focus::Logs, Focus::Events] {
            for action in Action::ALL {
                let mut app = state(true);
                app.focus = focus;
                let commands = app.update(action);
                assert!(
                    commands.iter().all(|c| !c.mutates()),
                    "{action} in {focus:?}: {commands:?}"
                );
                assert!(!is_confirm(&app), "{action} opened a dialog");
                if action.mutates() {
                    assert!(commands.is_empty());
                    let n = notice(&app);
                    // Refused for read-only, or unavailable for its own reason first.
                    assert!(!n.is_empty(), "{action} in {focus:?} said nothing");
                }
            }
        }
    }
}

#[test]
fn the_gate_is_in_request_so_a_dialog_answered_after_going_read_only_is_refused_too() {
    let mut app = not_created(false);
    app.on_key(key('c'));
    assert!(is_confirm(&app));
    app.read_only = true;
    assert!(app.on_key(key('y')).is_empty());
    assert_eq!(notice(&app), "read-only: refused to create the cluster");

    for command in [
        Command::CreateCluster,
        Command::DeleteCluster,
        Command::LaunchJob,
        Command::RetryJob,
        Command::DeleteAttempt(ATTEMPT_1.into()),
        Command::DeletePod(POD_OOM.into()),
    ] {
        assert!(app.request(command.clone()).is_empty());
        assert!(notice(&app).starts_with("read-only: refused to "));
    }
    // Reading is not mutating: fetching logs passes the gate.
    let f = fetch(ATTEMPT_1, None, false, 9);
    assert_eq!(app.request(f.clone()), [f]);
}

#[test]
fn read_only_still_reads() {
    let mut app = with_attempts(true);
    assert!(app.on_key(code(KeyCode::Enter)).is_empty());
    assert_eq!(app.logs.label(&app.model), POD_RUNNING);
    assert_eq!(
        app.on_key(key('p')),
        [fetch(ATTEMPT_2, Some(POD_RUNNING), true, 1)]
    );
    app.on_key(key('?'));
    assert_eq!(app.overlay, Some(Overlay::Help));
}

// ---------------------------------------------------------------------------------------------
// Worker events

#[test]
fn stale_tail_events_are_ignored() {
    let mut app = with_attempts(false);
    let old = app.model.logs.generation;
    // A retry: the store moves on to the new attempt, and the old tail's events come late.
    app.on_event(job_event(Change::Applied(attempt(
        "ml-training-job-3",
        3,
        AttemptPhase::Running,
    ))));
    let new = app.model.logs.generation;
    assert_eq!(new, old + 1);

    for event in [
        TailEvent::Lines {
            pod: POD_OOM.into(),
            lines: vec![line("late line of the old tail")],
        },
        TailEvent::PodEnded {
            pod: POD_OOM.into(),
            why: StreamEnd::Failed("gone".into()),
        },
        TailEvent::Reconnecting {
            pod: POD_OOM.into(),
            error: "reset".into(),
        },
        TailEvent::SaveFailed {
            pod: POD_OOM.into(),
            error: "disk full".into(),
        },
        TailEvent::SavedByAnother {
            pod: POD_OOM.into(),
        },
        TailEvent::WatchTrouble {
            error: "410 Gone".into(),
        },
    ] {
        assert!(
            app.on_event(Event::Tail {
                generation: old,
                event
            })
            .is_empty()
        );
    }
    app.on_event(Event::LogsSavedTo {
        generation: old,
        dir: "/old".into(),
    });
    assert!(app.model.logs.lines.is_empty());
    assert!(app.model.logs.ended.is_empty());
    assert_eq!(app.model.logs.saved_to, None);
    assert_eq!(app.model.logs.pods_stale, None);
    assert_eq!(app.model.trouble(), None);
    assert_eq!(app.notice, None);

    tail_lines(&mut app, "ml-training-job-3-abcde", vec![line("fresh")]);
    app.on_event(Event::LogsSavedTo {
        generation: new,
        dir: "/new".into(),
    });
    assert_eq!(texts(&app), ["fresh"]);
    assert_eq!(app.model.logs.received, 1);
    assert_eq!(app.model.logs.saved_to.as_deref(), Some("/new"));
}

#[test]
fn tail_events_of_the_current_generation_are_shown() {
    let mut app = with_attempts(false);
    let generation = app.model.logs.generation;
    let tail = |event| Event::Tail { generation, event };
    app.on_event(tail(TailEvent::Reconnecting {
        pod: POD_RUNNING.into(),
        error: "connection reset".into(),
    }));
    assert_eq!(
        app.model.trouble(),
        Some("logs of ml-training-job-2-4xk9p: reconnecting (connection reset)")
    );
    // Another pod's stream ending says nothing of this one; its own lines do.
    app.on_event(tail(TailEvent::PodEnded {
        pod: POD_OOM.into(),
        why: StreamEnd::Completed,
    }));
    assert!(app.model.trouble().is_some());
    app.on_event(tail(TailEvent::Lines {
        pod: POD_RUNNING.into(),
        lines: vec![line("epoch 8/10")],
    }));
    assert_eq!(app.model.trouble(), None);
    app.on_event(tail(TailEvent::PodEnded {
        pod: POD_IMAGE.into(),
        why: StreamEnd::Failed("container is waiting to start".into()),
    }));
    assert_eq!(
        app.model.logs.ended,
        [
            (POD_OOM.to_string(), "ended".to_string()),
            (
                POD_IMAGE.to_string(),
                "failed: container is waiting to start".to_string()
            )
        ]
    );
    assert_eq!(app.notice.as_ref().map(|n| n.level), Some(Level::Warning));
    app.on_event(tail(TailEvent::SaveFailed {
        pod: POD_RUNNING.into(),
        error: "disk full".into(),
    }));
    assert_eq!(app.notice.as_ref().map(|n| n.level), Some(Level::Error));
    assert!(notice(&app).contains("could not save the logs of ml-training-job-2-4xk9p"));
}

#[test]
fn a_failing_pod_watch_of_the_tail_marks_the_logs_pane_until_it_recovers() {
    let mut app = with_attempts(false);
    let generation = app.model.logs.generation;
    let tail = |event| Event::Tail { generation, event };
    app.on_event(tail(TailEvent::WatchTrouble {
        error: "connection refused".into(),
    }));
    assert_eq!(
        app.model.logs.pods_stale.as_deref(),
        Some("connection refused")
    );
    // Lines of the pods already followed go on coming; the list is still stale.
    tail_lines(&mut app, POD_RUNNING, vec![line("epoch 7/10")]);
    assert!(app.model.logs.pods_stale.is_some());
    app.on_event(tail(TailEvent::WatchRecovered));
    assert_eq!(app.model.logs.pods_stale, None);

    // A new attempt is a new tail, with a watch of its own.
    app.on_event(tail(TailEvent::WatchTrouble {
        error: "410 Gone".into(),
    }));
    app.on_event(job_event(Change::Applied(attempt(
        "ml-training-job-3",
        3,
        AttemptPhase::Running,
    ))));
    assert_eq!(app.model.logs.pods_stale, None);
}

#[test]
fn a_pod_saved_by_another_gantry_is_a_warning_not_an_error() {
    let mut app = with_attempts(false);
    let generation = app.model.logs.generation;
    app.on_event(Event::Tail {
        generation,
        event: TailEvent::SavedByAnother {
            pod: POD_RUNNING.into(),
        },
    });
    assert_eq!(app.notice.as_ref().map(|n| n.level), Some(Level::Warning));
    assert_eq!(
        notice(&app),
        "another Gantry is saving the log of ml-training-job-2-4xk9p: shown here, not saved"
    );
    assert_eq!(app.model.trouble(), None);
}

#[test]
fn lines_arriving_while_scrolled_back_keep_the_view_in_place() {
    let mut app = with_attempts(false);
    app.log_rows = 3;
    app.update(Action::PageUp);
    let shown = bottom_line(&app);
    tail_lines(&mut app, POD_RUNNING, vec![line("new 1"), line("new 2")]);
    assert_eq!(bottom_line(&app), shown);
    assert!(!app.logs.follow);
    app.update(Action::Bottom);
    assert_eq!(bottom_line(&app), "new 2");
}

#[test]
fn the_first_attempt_seen_and_each_new_one_are_followed() {
    let mut app = running(false);
    // Found at start, already finished: its logs are still there to read.
    assert_eq!(
        app.on_event(job_event(Change::Listed(failed_attempt()))),
        [store_follows(ATTEMPT_1, 1)]
    );
    for p in failed_pods() {
        assert!(app.on_event(pod_event(Change::Applied(p))).is_empty());
    }
    // The operator looks at a pod of attempt 1…
    app.on_key(key('j'));
    assert!(app.on_key(code(KeyCode::Enter)).is_empty());
    assert_eq!(app.logs.label(&app.model), FAILED_PODS[1]);
    // …then retries: the new attempt takes the logs pane over, and the selection resets.
    assert_eq!(
        app.on_event(job_event(Change::Applied(running_attempt()))),
        [store_follows(ATTEMPT_2, 2)]
    );
    assert_eq!(app.logs.label(&app.model), "all pods");
    assert_eq!(app.selection.attempt, None);
    assert_eq!(app.selection.pod, None);
    assert_eq!(
        app.selection
            .attempt(&app.model.jobs)
            .map(|a| a.name.as_str()),
        Some(ATTEMPT_2)
    );
    // Updates of the same attempt do not restart the tail.
    let mut later = running_attempt();
    later.ready = 2;
    assert!(app.on_event(job_event(Change::Applied(later))).is_empty());
    assert!(
        app.on_event(job_event(Change::Applied(failed_attempt())))
            .is_empty()
    );
    assert_eq!(app.model.logs.generation, 2);
}

#[test]
fn a_relist_drops_what_vanished_while_the_watch_was_down() {
    let mut app = with_attempts(false);
    assert_eq!(app.model.jobs.pods.items.len(), 6);

    app.on_event(pod_event(Change::Restarted));
    let [running_pod, image_pod, _oom] = <[_; 3]>::try_from(running_pods()).unwrap();
    app.on_event(pod_event(Change::Listed(running_pod)));
    app.on_event(pod_event(Change::Listed(image_pod)));
    assert_eq!(
        app.model.jobs.pods.items.len(),
        6,
        "nothing is dropped before Synced"
    );
    app.on_event(pod_event(Change::Synced));
    assert_eq!(pod_names(&app), [POD_RUNNING, POD_IMAGE]);

    // A Synced without a relist before it drops nothing.
    app.on_event(pod_event(Change::Synced));
    assert_eq!(pod_names(&app), [POD_RUNNING, POD_IMAGE]);

    // Applied adds, Deleted removes.
    let [_r, _i, oom] = <[_; 3]>::try_from(running_pods()).unwrap();
    app.on_event(pod_event(Change::Applied(oom.clone())));
    assert_eq!(pod_names(&app).len(), 3);
    app.on_event(pod_event(Change::Deleted(oom)));
    assert_eq!(pod_names(&app), [POD_RUNNING, POD_IMAGE]);

    // The same for attempts: attempt 1 was deleted while the watch was down.
    app.on_event(job_event(Change::Restarted));
    app.on_event(job_event(Change::Listed(running_attempt())));
    app.on_event(job_event(Change::Synced));
    let names: Vec<&str> = app
        .model
        .jobs
        .attempts()
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, [ATTEMPT_2]);
}

#[test]
fn a_failing_watch_is_shown_as_trouble_until_it_recovers() {
    let mut app = with_attempts(false);
    app.on_event(Event::Job(JobWatchEvent::Pod(Change::Trouble(
        "watch pods: 410 Gone".into(),
    ))));
    assert_eq!(app.model.trouble(), Some("watch pods: 410 Gone"));
    assert_eq!(app.model.jobs.pods.items.len(), 6, "what was known stays");
    app.on_event(pod_event(Change::Restarted));
    assert_eq!(app.model.trouble(), None);

    // Said outright, after a relist that changed nothing.
    app.on_event(Event::Job(JobWatchEvent::Job(Change::Trouble(
        "watch jobs: connection refused".into(),
    ))));
    assert!(app.model.trouble().is_some());
    app.on_event(Event::Job(JobWatchEvent::Job(Change::Recovered)));
    assert_eq!(app.model.trouble(), None);

    app.on_event(Event::Trouble {
        source: TroubleSource::Gke,
        message: "GKE: 503, retrying".into(),
    });
    assert!(app.model.trouble().is_some());
    app.on_event(Event::TroubleOver(TroubleSource::Gke));
    assert_eq!(app.model.trouble(), None);
}

#[test]
fn a_trouble_clears_only_when_its_own_source_recovers() {
    let mut app = with_attempts(false);
    let generation = app.model.logs.generation;
    app.on_event(Event::Trouble {
        source: TroubleSource::Gke,
        message: "GKE: 503".into(),
    });
    app.on_event(Event::Job(JobWatchEvent::Pod(Change::Trouble(
        "watch pods: 410 Gone".into(),
    ))));
    app.on_event(Event::Tail {
        generation,
        event: TailEvent::Reconnecting {
            pod: POD_RUNNING.into(),
            error: "connection reset".into(),
        },
    });
    assert_eq!(app.model.troubles.len(), 3);
    // Other watchers' news, a good poll of something else: nothing of these clears.
    app.on_event(Event::Job(JobWatchEvent::Job(Change::Recovered)));
    app.on_event(Event::TroubleOver(TroubleSource::Cluster));
    assert_eq!(app.model.troubles.len(), 3);
    app.on_event(Event::Job(JobWatchEvent::Pod(Change::Recovered)));
    assert_eq!(app.model.troubles.len(), 2);
    // A good poll that changes nothing draws nothing.
    app.dirty = false;
    app.on_event(Event::TroubleOver(TroubleSource::Cluster));
    assert!(!app.dirty);
    app.on_event(Event::TroubleOver(TroubleSource::Gke));
    assert!(app.dirty);
    assert_eq!(
        app.model.trouble(),
        Some("logs of ml-training-job-2-4xk9p: reconnecting (connection reset)")
    );
    // One viewer looking at one pod changes nothing of the streams the engine holds.
    app.on_key(code(KeyCode::Enter));
    assert!(app.model.trouble().is_some());

    // Deleting the cluster stops its streams, and their troubles go with them.
    assert_eq!(
        app.request(Command::DeleteCluster),
        [Command::DeleteCluster]
    );
    assert!(app.model.command_sent(&Command::DeleteCluster));
    assert_eq!(app.model.trouble(), None);
}

#[test]
fn provisioning_events_drive_the_cluster_pane() {
    let mut app = not_created(false);
    assert_eq!(app.model.cluster.phase(), ClusterPhase::NotCreated);
    assert!(!app.model.ticking());
    assert_eq!(app.on_key(key('c')), Vec::<Command>::new());
    assert_eq!(app.on_key(key('y')), [Command::CreateCluster]);

    let mut app = provisioning(false);
    assert_eq!(app.model.cluster.phase(), ClusterPhase::Provisioning);
    assert!(app.model.ticking(), "the elapsed counter moves by itself");
    let progress = app.model.cluster.progress.as_ref().unwrap();
    assert_eq!(progress.fraction(), 0.25);
    assert_eq!(progress.stage.as_ref().map(|s| s.index), Some(2));

    app.on_event(Event::Provision(ProvisionEvent::Retrying {
        request: "get operation",
        status: Some(503),
        attempt: 1,
        wait: std::time::Duration::from_millis(500),
        message: "GKE is busy".into(),
    }));
    assert_eq!(app.model.trouble(), Some("GKE is busy"));
    app.on_event(Event::Provision(ProvisionEvent::Cluster(cluster_summary(
        ClusterStatus::Running,
    ))));
    assert_eq!(app.model.trouble(), None);
    app.on_event(Event::Provision(ProvisionEvent::Finished {
        kind: OperationKind::Create,
        elapsed: std::time::Duration::from_secs(800),
    }));
    app.on_event(Event::ProvisionDone(Ok(
        "cluster ml-gke-cluster is RUNNING".into(),
    )));
    assert_eq!(app.model.cluster.phase(), ClusterPhase::Running);
    assert!(!app.model.ticking());
    assert_eq!(notice(&app), "cluster ml-gke-cluster is RUNNING");
    assert!(!app.model.connected);
    app.on_event(Event::Connected);
    assert_eq!(app.on_key(key('l')), [Command::LaunchJob]);
}

#[test]
fn a_failed_operation_is_an_error_and_only_the_workers_say_the_connection_is_gone() {
    let mut app = provisioning(false);
    app.on_event(Event::ProvisionDone(Err("quota exceeded for CPUS".into())));
    assert_eq!(app.model.cluster.busy, None);
    assert_eq!(
        app.model.cluster.last_error.as_deref(),
        Some("quota exceeded for CPUS")
    );
    assert_eq!(app.notice.as_ref().map(|n| n.level), Some(Level::Error));

    // GKE reconciles (an auto-upgrade, a node-pool change): the API server keeps serving, the
    // workers keep their connection, and launching still works, during and after.
    let mut app = running(false);
    assert!(app.model.connected);
    app.on_event(Event::Cluster(cluster_summary(ClusterStatus::Reconciling)));
    assert!(app.model.connected);
    assert_eq!(app.model.cluster.phase(), ClusterPhase::Other);
    assert_eq!(app.on_key(key('l')), [Command::LaunchJob]);
    app.on_event(Event::Cluster(cluster_summary(ClusterStatus::Running)));
    assert_eq!(app.on_key(key('l')), [Command::LaunchJob]);
    // The workers lost the cluster: refused until they are back.
    app.on_event(Event::Disconnected);
    assert!(refused(&mut app, key('l')).contains("connecting to the cluster"));
    app.on_event(Event::Connected);
    assert_eq!(app.on_key(key('l')), [Command::LaunchJob]);
}

#[test]
fn one_shot_results_become_notices() {
    let mut app = with_attempts(false);
    app.on_event(Event::Done {
        what: "delete pod x".into(),
        result: Err("forbidden".into()),
    });
    assert_eq!(notice(&app), "delete pod x: forbidden");
    assert_eq!(app.notice.as_ref().map(|n| n.level), Some(Level::Error));
    app.on_event(Event::Done {
        what: "launch".into(),
        result: Ok("launched ml-training-job-3".into()),
    });
    assert_eq!(notice(&app), "launched ml-training-job-3");
    assert_eq!(app.notice.as_ref().map(|n| n.level), Some(Level::Info));
}

#[test]
fn every_key_and_event_marks_the_screen_dirty() {
    let mut app = with_attempts(false);
    assert!(!app.dirty);
    app.on_key(key('x'));
    assert!(app.dirty, "even an unbound key (cheap, and simpler)");
    app.dirty = false;
    app.on_event(Event::Connected);
    assert!(app.dirty);
    // Except a source's "all is well" with nothing to clear: it comes after every good poll.
    app.dirty = false;
    app.on_event(Event::TroubleOver(TroubleSource::Gke));
    assert!(!app.dirty);
}
