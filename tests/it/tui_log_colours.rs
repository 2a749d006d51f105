//! A container's colours in the logs pane: SGR colour and emphasis in its lines are drawn as
//! the container meant them, under the search highlight, dropped under `NO_COLOR` (emphasis
//! stays), and nothing else an escape sequence asks for gets through.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gantry::ui::theme::Theme;
use gantry_test_support::tui::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::{Buffer, Cell};
use ratatui::style::{Color, Modifier};

fn render(app: &Tui, theme: Theme, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| gantry::ui::draw(frame, &app.model, &app.app, &theme, now()))
        .unwrap();
    terminal.backend().buffer().clone()
}

/// The cell where `text` first starts on screen.
fn cell_of<'a>(buffer: &'a Buffer, text: &str) -> &'a Cell {
    let area = buffer.area;
    for y in 0..area.height {
        let row: String = (0..area.width)
            .map(|x| buffer[(x, y)].symbol().to_string())
            .collect();
        if let Some(at) = row.find(text) {
            let x = row[..at].chars().count() as u16;
            return &buffer[(x, y)];
        }
    }
    panic!("{text:?} is not on screen");
}

fn coloured_app() -> Tui {
    let mut app = running(false);
    tail_lines(
        &mut app,
        POD_RUNNING,
        vec![
            line(
                "\x1b[1;31mERROR\x1b[0m disk \x1b[38;5;208morange\x1b[0m and \x1b[48;2;1;2;3mtruecolour\x1b[m plain",
            ),
            line("\x1b[3mitalic\x1b[23m \x1b[4munderlined\x1b[24m \x1b]0;title\x07\x1b[2Jafter"),
        ],
    );
    app
}

#[test]
fn a_containers_colours_are_drawn_as_it_meant_them() {
    let app = coloured_app();
    let screen = render(&app, Theme::colored(), 120, 30);
    let error = cell_of(&screen, "ERROR");
    assert_eq!(error.fg, Color::Red);
    assert!(error.modifier.contains(Modifier::BOLD));
    assert_eq!(cell_of(&screen, "orange").fg, Color::Indexed(208));
    assert_eq!(cell_of(&screen, "truecolour").bg, Color::Rgb(1, 2, 3));
    let plain = cell_of(&screen, "plain");
    assert_eq!((plain.fg, plain.bg), (Color::Reset, Color::Reset));
    assert!(plain.modifier.is_empty());
    assert!(
        cell_of(&screen, "italic")
            .modifier
            .contains(Modifier::ITALIC)
    );
    assert!(
        cell_of(&screen, "underlined")
            .modifier
            .contains(Modifier::UNDERLINED)
    );
    // The title and the clear went; the text after them is there, plain.
    assert!(cell_of(&screen, "after").modifier.is_empty());
}

#[test]
fn no_color_keeps_the_emphasis_and_drops_the_colours() {
    let app = coloured_app();
    let screen = render(&app, Theme::plain(), 120, 30);
    let error = cell_of(&screen, "ERROR");
    assert_eq!(error.fg, Color::Reset);
    assert!(error.modifier.contains(Modifier::BOLD));
    assert_eq!(cell_of(&screen, "orange").fg, Color::Reset);
}

#[test]
fn a_search_match_is_highlighted_over_the_containers_colour() {
    let mut app = coloured_app();
    app.logs.search = Some("rro".into());
    let screen = render(&app, Theme::colored(), 120, 30);
    let hit = cell_of(&screen, "RROR");
    let highlight = Theme::colored().highlight();
    assert_eq!(Some(hit.bg), highlight.bg);
    assert_eq!(Some(hit.fg), highlight.fg);
    // Outside the match the line keeps its own colour.
    assert_eq!(cell_of(&screen, "ERROR").fg, Color::Red);
}

#[test]
fn a_wrapped_coloured_line_keeps_its_colour_on_every_row() {
    let mut app = running(false);
    let long = format!("\x1b[32m{}\x1b[0m end", "g".repeat(150));
    tail_lines(&mut app, POD_RUNNING, vec![line(&long)]);
    app.logs.wrap = true;
    let screen = render(&app, Theme::colored(), 80, 24);
    let area = screen.area;
    let green_rows = (0..area.height)
        .filter(|&y| {
            (0..area.width).any(|x| {
                let c = &screen[(x, y)];
                c.symbol() == "g" && c.fg == Color::Green
            })
        })
        .count();
    assert!(green_rows >= 2, "{green_rows} rows of green");
    assert_eq!(cell_of(&screen, "end").fg, Color::Reset);
}
