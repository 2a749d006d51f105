//! What a viewer refuses and what it asks first: keys that cannot act now say why and ask for
//! nothing; mutating keys open a dialog that only the right answer confirms; read-only refuses
//! every mutating command in one place, whatever key or dialog asked for it.
// Helpers outside #[test] functions unwrap too (clippy.toml allows it only inside them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::tui as common_tui;

use common_tui::*;
use crossterm::event::{KeyCode, KeyEvent};
use gantry::app::confirm::Answer;
use gantry::app::{Focus, Overlay};
use gantry::engine::world::cluster::ClusterPhase;
use gantry::engine::{Command, Report};
use gantry::gke::{ClusterStatus, OperationKind, ProvisionEvent};
use gantry::k8s::status::AttemptPhase;
use gantry::k8s::watch::Change;
use gantry::keys::Action;
use gantry::vocabulary::Severity;

// ---------------------------------------------------------------------------------------------
// What cannot act now says why, and asks for nothing

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

    // A read-only viewer is not sent to a key it may not use.
    let mut app = not_created(true);
    assert_eq!(
        refused(&mut app, key('l')),
        "no cluster yet (read-only: it cannot be created from here)"
    );

    let mut app = provisioning(false);
    assert_eq!(
        refused(&mut app, key('l')),
        "the cluster is not running yet (Provisioning)"
    );

    // RUNNING, but the Job watchers are not connected yet.
    let mut app = new_app(false);
    app.on_event(Report::Target(target()));
    app.on_event(Report::Cluster(cluster_summary(ClusterStatus::Running)));
    assert_eq!(refused(&mut app, key('l')), "connecting to the cluster…");
    app.on_event(Report::Connected);
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
    app.on_event(Report::Provision(ProvisionEvent::Started {
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
    // The seed's 3 × n1-standard-1 with 100 GB pd-balanced each, and GKE's fee, in us-central1.
    assert!(text.contains("cost     ≈ $0.28/h, $207/month"), "{text}");

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

/// Where each command that changes the cloud is asked for, by an exhaustive match: a new command
/// does not compile until it is placed here.
fn asked_by_a_key_walked_here(command: &Command) -> bool {
    match command {
        Command::CreateCluster
        | Command::DeleteCluster
        | Command::LaunchJob
        | Command::RetryJob
        | Command::DeleteAttempt(_)
        | Command::DeletePod(_) => true,
        // From the plan's overlay, with its drift: `tui_drift` walks it, read-only included.
        Command::ApplyPlan { .. } => false,
        // Only the engine asks (the idle cluster, through its own gate): no key does.
        Command::ScaleNodePools(_) => false,
        // The engine's own bookkeeping of pod ends, through its own gate: no key asks.
        Command::RecordEnds(_) => false,
        // The engine's own bookkeeping of the run's cost, through its own gate: no key asks.
        Command::RecordCost(_) => false,
        // The recoverer's own, through its own gate: no key asks.
        Command::Recover { .. } | Command::FallBack { .. } | Command::EndRun { .. } => false,
        // The recoverer policy's own, through its own gate: no key asks.
        Command::TakeLease { .. } | Command::GiveWayLease => false,
        // Reading, not changing.
        Command::FetchLogs { .. } => false,
    }
}

#[test]
fn the_walk_covers_every_mutating_command_a_key_asks_for() {
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
        Command::ApplyPlan { generation: 1 },
        Command::ScaleNodePools(gantry::gke::resize::Scale::ToZero),
        fetch("a", None, false, 1),
    ] {
        let walked = covered.contains(&std::mem::discriminant(&command));
        assert_eq!(walked, asked_by_a_key_walked_here(&command), "{command:?}");
        if walked {
            assert!(command.mutates());
        }
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
        assert_eq!(n.severity, Severity::Warning);
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
    app.restrict("your key was taken out of the operators");
    assert!(app.on_key(key('y')).is_empty());
    assert_eq!(notice(&app), "read-only: refused to create the cluster");

    for command in [
        Command::CreateCluster,
        Command::DeleteCluster,
        Command::LaunchJob,
        Command::RetryJob,
        Command::DeleteAttempt(ATTEMPT_1.into()),
        Command::DeletePod(POD_OOM.into()),
        Command::ScaleNodePools(gantry::gke::resize::Scale::ToZero),
        Command::ScaleNodePools(gantry::gke::resize::Scale::ToConfig),
        Command::ApplyPlan { generation: 1 },
    ] {
        assert!(app.request(command.clone()).is_empty());
        assert!(app.pass(command.clone()).is_none());
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
