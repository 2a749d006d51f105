//! The viewer's screen is right: every byte it writes is replayed into a terminal emulator (the
//! `vt100` crate) and, after each frame, the emulator's cells (text, colours, attributes) are
//! those of the same state drawn whole. Driven through the real App and `ui::draw`, with line
//! arrivals, keys, overlays, searches, scroll-backs and resizes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::{KeyCode, KeyEvent};
use gantry::ui;
use gantry::ui::theme::Theme;
use gantry::viewer::Screen;
use gantry::viewer::screen::Written;
use gantry_test_support::tui::*;
use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use unicode_width::UnicodeWidthStr;

/// A screen writing into memory, and the terminal those bytes reach.
struct Replay {
    screen: Screen<Vec<u8>>,
    terminal: vt100::Parser,
    size: (u16, u16),
}

impl Replay {
    fn new(width: u16, height: u16) -> Self {
        Self {
            screen: Screen::new(Vec::new(), Rect::new(0, 0, width, height)).unwrap(),
            terminal: vt100::Parser::new(nz(height), nz(width), 0),
            size: (width, height),
        }
    }

    fn resize(&mut self, width: u16, height: u16) {
        self.screen.resize(Rect::new(0, 0, width, height)).unwrap();
        self.terminal.screen_mut().set_size(nz(height), nz(width));
        self.size = (width, height);
    }

    /// Draws a frame as the viewer does, replays its bytes and checks the terminal shows it.
    fn frame(&mut self, tui: &mut Tui, step: &str) -> (Written, Vec<u8>) {
        let (width, height) = self.size;
        tui.app.log_rows = ui::log_rows(width, height, tui.app.metrics.shown);
        let band = ui::full_width_log_rows(width, height, tui.app.metrics.shown);
        let written = self.screen.draw(band, |frame| draw(frame, tui)).unwrap();
        let bytes = std::mem::take(self.screen.writer_mut());
        assert_eq!(written.bytes, bytes.len());
        self.terminal.process(&bytes);
        let mut whole = Terminal::new(TestBackend::new(width, height)).unwrap();
        // The frame itself, not the test backend's copy (which, as a terminal would, misses
        // what was drawn over a wide character's right half).
        let expected = whole.draw(|frame| draw(frame, tui)).unwrap().buffer.clone();
        let step = format!("{step}, after {:?}", String::from_utf8_lossy(&bytes));
        assert_shows(self.terminal.screen(), &expected, &step);
        (written, bytes)
    }
}

fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).unwrap()
}

fn draw(frame: &mut ratatui::Frame, tui: &Tui) {
    ui::draw(frame, &tui.model, &tui.app, &Theme::colored(), now());
}

fn vt_color(c: Color) -> vt100::Color {
    let named = |n: u8| vt100::Color::Idx(n);
    match c {
        Color::Reset => vt100::Color::Default,
        Color::Black => named(0),
        Color::Red => named(1),
        Color::Green => named(2),
        Color::Yellow => named(3),
        Color::Blue => named(4),
        Color::Magenta => named(5),
        Color::Cyan => named(6),
        Color::Gray => named(7),
        Color::DarkGray => named(8),
        Color::LightRed => named(9),
        Color::LightGreen => named(10),
        Color::LightYellow => named(11),
        Color::LightBlue => named(12),
        Color::LightMagenta => named(13),
        Color::LightCyan => named(14),
        Color::White => named(15),
        Color::Indexed(n) => named(n),
        Color::Rgb(r, g, b) => vt100::Color::Rgb(r, g, b),
    }
}

/// What a terminal can show of a frame: a wide character whose right half another widget
/// drew over (an overlay's border over a CJK line) is no longer whole, so it is a blank.
fn showable(buffer: &Buffer) -> Buffer {
    let mut shown = buffer.clone();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            let w = buffer[(x, y)].symbol().width() as u16;
            let covered =
                (1..w).any(|d| x + d >= buffer.area.width || buffer[(x + d, y)].symbol() != " ");
            if w > 1 && covered {
                shown[(x, y)].set_symbol(" ");
            }
        }
    }
    shown
}

fn assert_shows(terminal: &vt100::Screen, expected: &Buffer, step: &str) {
    let expected = &showable(expected);
    for y in 0..expected.area.height {
        for x in 0..expected.area.width {
            let want = &expected[(x, y)];
            let got = terminal.cell(y, x).unwrap();
            if got.is_wide_continuation() {
                continue;
            }
            let text = if got.contents().is_empty() {
                " "
            } else {
                got.contents()
            };
            let seen = (
                text,
                got.fgcolor(),
                got.bgcolor(),
                got.bold(),
                got.dim(),
                got.italic(),
                got.underline(),
                got.inverse(),
            );
            let m = want.modifier;
            let meant = (
                want.symbol(),
                vt_color(want.fg),
                vt_color(want.bg),
                m.contains(Modifier::BOLD),
                m.contains(Modifier::DIM),
                m.contains(Modifier::ITALIC),
                m.contains(Modifier::UNDERLINED),
                m.contains(Modifier::REVERSED),
            );
            assert_eq!(
                seen,
                meant,
                "{step}: cell ({x}, {y}) differs; the terminal shows:\n{}",
                terminal.contents()
            );
        }
    }
}

/// A training line of about 90 bytes, numbered.
fn training_line(n: usize) -> String {
    format!(
        "epoch 3 step {n:>6} loss {:.4} lr 3.0e-4 grad_norm {:.3} tokens/s 48213 mem 14.2GiB ok",
        1.0 / (n as f64 + 1.0),
        (n % 97) as f64 / 10.0
    )
}

#[test]
fn each_new_line_scrolls_the_logs_pane_and_costs_little_more_than_the_line() {
    let mut tui = with_attempts(false);
    let mut replay = Replay::new(100, 32);
    let (first, _) = replay.frame(&mut tui, "first frame");
    assert_eq!(first.scrolled, 0);
    for n in 0..20 {
        tail_lines(&mut tui, POD_RUNNING, vec![line(&training_line(n))]);
        let (written, bytes) = replay.frame(&mut tui, &format!("line {n}"));
        assert_eq!(
            written.scrolled,
            1,
            "line {n}: {:?}",
            String::from_utf8_lossy(&bytes)
        );
        // The line, its pod's tag and border, the line counter, the scroll: nothing else.
        assert!(
            written.bytes < training_line(n).len() + 64,
            "line {n} cost {} bytes: {:?}",
            written.bytes,
            String::from_utf8_lossy(&bytes)
        );
    }
}

#[test]
fn nothing_changed_writes_nothing() {
    let mut tui = with_attempts(false);
    let mut replay = Replay::new(100, 32);
    replay.frame(&mut tui, "first frame");
    let (written, _) = replay.frame(&mut tui, "same frame");
    assert_eq!(written.bytes, 0);
}

#[test]
fn a_lost_frame_makes_the_next_one_whole() {
    let mut tui = with_attempts(false);
    let mut replay = Replay::new(100, 32);
    replay.frame(&mut tui, "first frame");
    replay.screen.redraw_whole();
    // What the terminal showed is gone (the frame never arrived, or was garbled).
    replay.terminal.process(b"\x1b[2Jgarbage");
    let (_, bytes) = replay.frame(&mut tui, "after a lost frame");
    assert!(bytes.windows(4).any(|w| w == b"\x1b[2J"));
}

#[test]
fn wide_characters_and_the_last_column_land_where_they_belong() {
    let mut tui = with_attempts(false);
    let mut replay = Replay::new(100, 32);
    replay.frame(&mut tui, "first frame");
    let lines = [
        "数据加载完成 第3轮 损失下降 🚀 emoji and CJK side by side 数据加载完成 第3轮 损失下降 数据加载完成",
        &"x".repeat(300),
        "🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀🚀",
        "short",
    ];
    for (i, text) in lines.iter().enumerate() {
        tail_lines(&mut tui, POD_RUNNING, vec![line(text)]);
        replay.frame(&mut tui, &format!("line {i}"));
    }
    tui.on_key(key('w'));
    replay.frame(&mut tui, "wrap toggled");
    replay.resize(81, 30);
    replay.frame(&mut tui, "odd width");
}

/// What happens between two frames.
#[derive(Debug, Clone)]
enum Step {
    Lines(Vec<(u8, u16)>),
    Key(usize),
    Resize(u16, u16),
}

const KEYS: [KeyCode; 18] = [
    KeyCode::Char('?'),
    KeyCode::Char('w'),
    KeyCode::Char('f'),
    KeyCode::Char('/'),
    KeyCode::Char('e'),
    KeyCode::Char('n'),
    KeyCode::Char('g'),
    KeyCode::Char('G'),
    KeyCode::Char('m'),
    KeyCode::Char('a'),
    KeyCode::Char('x'),
    KeyCode::Tab,
    KeyCode::Esc,
    KeyCode::Enter,
    KeyCode::Up,
    KeyCode::Down,
    KeyCode::PageUp,
    KeyCode::PageDown,
];

fn text_of(kind: u8, n: u16) -> String {
    match kind % 4 {
        0 => training_line(usize::from(n)),
        1 => format!("short {n}"),
        2 => format!("{} {n}", "wrap me ".repeat(usize::from(n % 40) + 10)),
        _ => format!("宽字符 {n} 🚀 数据 {}", "界".repeat(usize::from(n % 60))),
    }
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => prop::collection::vec((any::<u8>(), any::<u16>()), 1..8).prop_map(Step::Lines),
        3 => (0..KEYS.len()).prop_map(Step::Key),
        1 => (40u16..140, 10u16..50).prop_map(|(w, h)| Step::Resize(w, h)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn the_terminal_always_shows_what_a_whole_redraw_would(
        steps in prop::collection::vec(step(), 1..30)
    ) {
        let mut tui = with_attempts(false);
        let mut replay = Replay::new(100, 32);
        replay.frame(&mut tui, "first frame");
        for (i, s) in steps.iter().enumerate() {
            match s {
                Step::Lines(lines) => {
                    let lines = lines.iter().map(|&(k, n)| line(&text_of(k, n))).collect();
                    tail_lines(&mut tui, POD_RUNNING, lines);
                }
                Step::Key(k) => {
                    tui.on_key(KeyEvent::from(KEYS[*k]));
                }
                Step::Resize(w, h) => replay.resize(*w, *h),
            }
            replay.frame(&mut tui, &format!("step {i} ({s:?})"));
        }
    }
}
