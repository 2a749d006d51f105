//! The screenshot in README.md is the real TUI, drawn by this test from the code. When the UI
//! changes, regenerate it with `GANTRY_UPDATE_SCREENSHOT=1 cargo test --test readme_screenshot`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry_test_support::tui as common_tui;

use std::path::Path;

use ratatui::Terminal;
use ratatui::backend::TestBackend;

const BEGIN: &str = "<!-- screenshot: begin -->\n```text\n";
const END: &str = "```\n<!-- screenshot: end -->";

fn render() -> String {
    let mut app = common_tui::with_attempts(false);
    app.on_event(common_tui::usage());
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal.draw(|f| app.draw(f)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut row = String::new();
        for x in 0..buffer.area.width {
            row.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

#[test]
fn readme_shows_the_real_tui() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let start = readme
        .find(BEGIN)
        .expect("README has the screenshot markers")
        + BEGIN.len();
    let end = readme[start..]
        .find(END)
        .expect("README closes the screenshot")
        + start;
    let screen = render();
    if std::env::var_os("GANTRY_UPDATE_SCREENSHOT").is_some() {
        let updated = format!("{}{screen}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, updated).unwrap();
        std::fs::write(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/screenshot.txt"),
            &screen,
        )
        .unwrap();
        return;
    }
    assert_eq!(
        &readme[start..end],
        screen,
        "README's screenshot is stale: regenerate it (see this file's doc)"
    );
}
