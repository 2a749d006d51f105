//! Drift in the TUI: the cluster pane's marker and one-line difference, and `P`'s plan overlay
//! — opened by anyone, applied with `y` only through the read-only gate and only while the plan
//! shown is still the plan. Snapshots at 80×24 (the compact layout, over SSH) and 120×40.
// Helpers outside #[test] functions unwrap too (clippy.toml allows it only inside them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::tui as common_tui;

use common_tui::*;
use crossterm::event::KeyCode;
use gantry::app::Overlay;
use gantry::engine::{Command, Report};
use gantry::gke::{ClusterStatus, OperationKind, ProvisionEvent};
use gantry::vocabulary::Severity;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn screen(app: &Tui, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| app.draw(frame)).unwrap();
    terminal
}

/// The screen's rows as text.
fn rows(app: &Tui, width: u16, height: u16) -> Vec<String> {
    let terminal = screen(app, width, height);
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect())
        .collect()
}

/// Snapshots `<name>_80x24` and `<name>_120x40`.
fn snapshot(name: &str, app: &mut Tui) {
    for (width, height) in SIZES {
        app.log_rows = gantry::ui::log_rows(width, height, app.metrics.shown);
        let terminal = screen(app, width, height);
        insta::assert_snapshot!(format!("{name}_{width}x{height}"), terminal.backend());
    }
}

/// Running as the config says, and told the config: no drift.
fn as_configured() -> Tui {
    let mut app = running(false);
    let config = app.app.config.cluster.clone();
    app.on_event(Report::Desired {
        cluster: Box::new(config),
        may_scale_to_zero: false,
        watcher: None,
    });
    app
}

fn opened_plan(app: &mut Tui) -> gantry::app::PlanView {
    assert!(
        app.on_key(key('P')).is_empty(),
        "opening the plan asks for nothing"
    );
    match &app.overlay {
        Some(Overlay::Plan(view)) => view.clone(),
        other => panic!("P opened {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// What the pane shows

#[test]
fn a_cluster_as_configured_has_no_drift_marker() {
    let mut app = as_configured();
    assert!(app.model.cluster.drifted().is_none());
    snapshot("no_drift", &mut app);
}

#[test]
fn a_drifted_cluster_shows_the_marker_and_the_difference() {
    let mut app = drifted(false);
    snapshot("drift", &mut app);
}

#[test]
fn the_compact_pane_keeps_status_nodes_cost_and_marker() {
    let app = drifted(false);
    let rows = rows(&app, 80, 24);
    let title = &rows[0];
    assert!(title.contains("RUNNING"), "{title}");
    assert!(title.contains("⚠ drift"), "{title}");
    assert!(rows[1].contains("1 nodes"), "{}", rows[1]);
    assert!(rows[1].contains("/h"), "{}", rows[1]);
    assert!(
        rows[2].contains("config 3 × n1-standard-1 · cluster 1 × e2-medium"),
        "{}",
        rows[2]
    );
}

#[test]
fn the_plan_key_is_hinted_only_while_the_cluster_has_drifted() {
    // Wide enough for the idle reminder and the hints both.
    let status_line = |app: &Tui| rows(app, 200, 50).pop().unwrap();
    assert!(status_line(&drifted(false)).contains("P plan"));
    assert!(!status_line(&as_configured()).contains("P plan"));
}

#[test]
fn the_help_lists_the_plan_key() {
    let mut app = drifted(false);
    app.on_key(key('?'));
    let text = rows(&app, 120, 40).join("\n");
    assert!(text.contains("P show the plan (y applies)"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// The overlay

#[test]
fn p_opens_the_whole_plan_with_the_cost_before_and_after() {
    let mut app = drifted(false);
    let view = opened_plan(&mut app);
    assert_eq!(view.generation, app.model.cluster.drift.generation());
    let lines = view.lines();
    assert_eq!(lines[0], "  ~ default-pool.nodeCount: 1 → 3 (in place)");
    assert_eq!(
        lines[1],
        "  ~ default-pool.machineType: e2-medium → n1-standard-1 (nodes recreated)"
    );
    assert!(lines[2].starts_with("Cost: ≈ $0.") && lines[2].contains("/h → $0.28/h"));
    snapshot("plan_overlay", &mut app);
}

#[test]
fn any_key_but_y_or_a_scroll_closes_the_plan_and_asks_for_nothing() {
    let mut app = drifted(false);
    opened_plan(&mut app);
    assert!(app.on_key(code(KeyCode::Down)).is_empty());
    assert!(
        matches!(app.overlay, Some(Overlay::Plan(_))),
        "scrolling keeps it open"
    );
    assert!(app.on_key(key('n')).is_empty());
    assert_eq!(app.overlay, None);
    opened_plan(&mut app);
    assert!(app.on_key(code(KeyCode::Esc)).is_empty());
    assert_eq!(app.overlay, None);
}

#[test]
fn a_long_plan_scrolls_within_its_lines() {
    let mut app = drifted(false);
    let mut view = opened_plan(&mut app);
    let last = view.lines().len() - 1;
    view.scroll_by(100);
    assert_eq!(view.scroll, last);
    view.scroll_by(-100);
    assert_eq!(view.scroll, 0);
}

#[test]
fn y_applies_the_plan_shown() {
    let mut app = drifted(false);
    let view = opened_plan(&mut app);
    assert_eq!(
        app.on_key(key('y')),
        [Command::ApplyPlan {
            generation: view.generation
        }]
    );
    assert_eq!(app.overlay, None);
}

#[test]
fn read_only_viewers_see_the_plan_and_y_is_refused() {
    let mut app = drifted(true);
    opened_plan(&mut app);
    let text = rows(&app, 80, 24).join("\n");
    assert!(text.contains("read-only: applying is refused"), "{text}");
    snapshot("plan_overlay_read_only", &mut app);
    assert!(app.on_key(key('y')).is_empty());
    let notice = app.notice.clone().unwrap();
    assert_eq!(notice.severity, Severity::Warning);
    assert_eq!(notice.text, "read-only: refused to apply the plan");
}

#[test]
fn a_plan_the_cluster_has_moved_on_from_is_not_applied() {
    let mut app = drifted(false);
    opened_plan(&mut app);
    // The next poll: someone resized the pool meanwhile.
    let mut resized = hand_made_summary();
    resized.node_count = 2;
    resized.node_pools[0].node_count = 2;
    app.on_event(Report::Cluster(resized));
    let text = rows(&app, 120, 40).join("\n");
    assert!(text.contains("the cluster changed since"), "{text}");
    assert!(app.on_key(key('y')).is_empty());
    assert!(
        notice(&app).contains("the cluster changed since this plan was shown"),
        "{}",
        notice(&app)
    );
    // Opened again, the plan is the new one, and y applies it.
    let view = opened_plan(&mut app);
    assert_eq!(
        app.on_key(key('y')),
        [Command::ApplyPlan {
            generation: view.generation
        }]
    );
}

#[test]
fn the_same_summary_polled_again_keeps_the_plan_applicable() {
    let mut app = drifted(false);
    let view = opened_plan(&mut app);
    app.on_event(Report::Cluster(hand_made_summary()));
    assert_eq!(
        app.on_key(key('y')),
        [Command::ApplyPlan {
            generation: view.generation
        }]
    );
}

#[test]
fn nothing_to_apply_sends_nothing() {
    let mut app = as_configured();
    opened_plan(&mut app);
    assert!(app.on_key(key('y')).is_empty());
    assert_eq!(
        notice(&app),
        "nothing to apply: the cluster matches the config"
    );
}

#[test]
fn applying_waits_for_an_operation_under_way() {
    let mut app = drifted(false);
    opened_plan(&mut app);
    app.on_event(Report::Provision(ProvisionEvent::Started {
        kind: OperationKind::Delete,
        operation: "operation-1".into(),
    }));
    assert!(app.on_key(key('y')).is_empty());
    assert_eq!(notice(&app), "not applied: wait for the delete to end");
}

#[test]
fn a_cluster_gantry_does_not_manage_has_no_plan() {
    let mut app = context_cluster(false);
    assert_eq!(refused(&mut app, key('P')), CONTEXT_REASON);
}

#[test]
fn before_gke_answers_there_is_no_plan_yet() {
    let mut app = new_app(false);
    app.on_event(Report::Target(target()));
    let config = app.app.config.cluster.clone();
    app.on_event(Report::Desired {
        cluster: Box::new(config),
        may_scale_to_zero: false,
        watcher: None,
    });
    assert!(refused(&mut app, key('P')).contains("no plan yet"));
    // Not created: the plan is the create, which c makes.
    app.on_event(Report::Cluster(not_found_summary()));
    opened_plan(&mut app);
    assert!(app.on_key(key('y')).is_empty());
    assert_eq!(notice(&app), "no cluster yet: press c to create it");
    let _ = ClusterStatus::NotFound;
}

#[test]
fn the_overlay_says_what_this_cluster_cannot_take_is_left() {
    let mut app = running(false);
    let mut config = app.app.config.cluster.clone();
    config.spot = true;
    app.on_event(Report::Desired {
        cluster: Box::new(config),
        may_scale_to_zero: false,
        watcher: None,
    });
    opened_plan(&mut app);
    let text = rows(&app, 120, 40).join("\n");
    assert!(
        text.contains("default-pool.spot: false → true (new node pool)"),
        "{text}"
    );
    assert!(text.contains("is left as it is"), "{text}");
    assert!(text.contains("y applies"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// The watcher (`[watcher] in-cluster = true`)

/// As configured, with a watcher in the config that the cluster does not have yet.
fn with_watcher() -> Tui {
    let mut app = running(false);
    let mut config = app.app.config.clone();
    config.watcher.in_cluster = true;
    config.watcher.image = Some("example.com/team/gantry:test".into());
    config.watcher.authorized_keys = Some("/dev/null".into());
    config.watcher.operators = Some("/dev/null".into());
    let desired = gantry::watcher::desired::Desired::in_cluster(&config, None)
        .unwrap()
        .unwrap();
    let planned =
        gantry::watcher::planned::Planned::of(&desired, &config, "us-central1-a", Ok(None));
    app.on_event(Report::Desired {
        cluster: Box::new(config.cluster.clone()),
        may_scale_to_zero: false,
        watcher: Some(Box::new(planned)),
    });
    app
}

#[test]
fn the_plan_shows_the_watcher_to_make_with_its_cost_and_y_makes_it() {
    let mut app = with_watcher();
    let view = opened_plan(&mut app);
    let lines = view.lines();
    assert_eq!(lines[0], "No changes: the cluster matches the config.");
    assert_eq!(
        lines[3],
        "  + deployment gantry-watcher-ml-training-job in default: gantry watch"
    );
    let cost = lines
        .iter()
        .find(|l| l.starts_with("Watcher cost:"))
        .unwrap();
    assert!(cost.starts_with("Watcher cost: ≈ $0.0025/h"), "{cost}");
    let text = rows(&app, 80, 24).join("\n");
    assert!(
        text.contains("(by CPU) of default-pool's n1-standard-1"),
        "{text}"
    );
    assert!(text.contains("y makes the watcher"), "{text}");
    snapshot("plan_overlay_watcher", &mut app);
    assert_eq!(
        app.on_key(key('y')),
        [Command::ApplyPlan {
            generation: view.generation
        }]
    );
}

#[test]
fn a_current_watcher_leaves_nothing_to_apply() {
    let mut app = with_watcher();
    let mut config = app.app.config.clone();
    config.watcher.in_cluster = true;
    config.watcher.image = Some("example.com/team/gantry:test".into());
    config.watcher.authorized_keys = Some("/dev/null".into());
    config.watcher.operators = Some("/dev/null".into());
    let desired = gantry::watcher::desired::Desired::in_cluster(&config, None)
        .unwrap()
        .unwrap();
    let mut deployment = desired.plan.deployment();
    deployment.metadata.annotations = Some(
        [(
            gantry::watcher::DESIRED_ANNOTATION.to_string(),
            desired.fingerprint(),
        )]
        .into(),
    );
    app.on_event(Report::Watcher(Some(
        gantry::engine::world::lease::WatcherSeen {
            ready: true,
            version: Some(gantry::watcher::VERSION.into()),
            there: gantry::watcher::planned::There::of(&deployment),
        },
    )));
    let view = opened_plan(&mut app);
    assert!(
        view.lines()
            .iter()
            .any(|l| l.contains("in default: current, gantry watch")),
        "{:#?}",
        view.lines()
    );
    assert!(app.on_key(key('y')).is_empty());
    assert_eq!(
        notice(&app),
        "nothing to apply: the cluster matches the config"
    );
}
