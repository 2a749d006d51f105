//! The bytes a frame costs on the wire. What the terminal's cursor and pen (its current style)
//! are is remembered between frames, so a cell costs only what changes: no cursor move when the
//! cursor is already there, no style when the pen already has it, a short move where one does.
//! Anything this cannot be sure of (after a wide character, after the last column) is forgotten,
//! and the next cell moves the cursor explicitly. The scroll region set to scroll the logs is
//! left set from one frame to the next (nothing written relies on the whole screen scrolling:
//! every cell is placed, and nothing is printed past a last column), and set back to the whole
//! screen before a whole frame and when the viewer leaves.

use std::io::Write;

use ratatui::buffer::Cell;
use ratatui::style::{Color, Modifier, Style};
use unicode_width::UnicodeWidthStr;

/// What the terminal is known to be in: where its cursor is, with which style it writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Pen {
    /// None: unknown (after a wide character, the last column, or a write we did not track).
    pub at: Option<(u16, u16)>,
    /// None: unknown (before the first reset).
    pub style: Option<CellStyle>,
    /// The terminal's scroll region, rows `top..bottom` (0-based, bottom exclusive); None:
    /// unknown. The whole screen is `Some((0, u16::MAX))`.
    pub region: Option<(u16, u16)>,
}

/// The scroll region of a terminal that was told [`WHOLE_REGION`].
const WHOLE: (u16, u16) = (0, u16::MAX);

/// Makes the whole screen the scroll region (DECSTBM without rows).
pub const WHOLE_REGION: &[u8] = b"\x1b[r";

/// A cell's look, everything a terminal's SGR sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CellStyle {
    pub fg: Color,
    pub bg: Color,
    pub underline: Color,
    pub modifier: Modifier,
}

impl CellStyle {
    pub fn of(cell: &Cell) -> Self {
        Self {
            fg: cell.fg,
            bg: cell.bg,
            underline: cell.underline_color,
            modifier: cell.modifier,
        }
    }

    /// What a terminal shows after `ESC[m`: default colours, no attributes.
    pub fn plain() -> Self {
        Self {
            fg: Color::Reset,
            bg: Color::Reset,
            underline: Color::Reset,
            modifier: Modifier::empty(),
        }
    }
}

impl From<CellStyle> for Style {
    fn from(s: CellStyle) -> Self {
        Style::default()
            .fg(s.fg)
            .bg(s.bg)
            .underline_color(s.underline)
            .add_modifier(s.modifier)
    }
}

impl Pen {
    /// Knows nothing: the first frame says everything.
    pub fn unknown() -> Self {
        Self {
            at: None,
            style: None,
            region: None,
        }
    }

    /// Clears the screen with the default colours (after a reset: erasing fills with the pen's
    /// background), hides the cursor, and makes the whole screen the scroll region.
    pub fn clear_screen(&mut self, out: &mut Vec<u8>) {
        self.whole_region(out);
        out.extend_from_slice(b"\x1b[m\x1b[?25l\x1b[2J");
        self.style = Some(CellStyle::plain());
        self.at = None;
    }

    /// Makes the whole screen the scroll region again, if it might not be (the cursor goes to
    /// the top left, as setting any region puts it).
    pub fn whole_region(&mut self, out: &mut Vec<u8>) {
        if self.region != Some(WHOLE) {
            out.extend_from_slice(WHOLE_REGION);
            self.region = Some(WHOLE);
            self.at = Some((0, 0));
        }
    }

    /// Scrolls rows `top..bottom` (0-based, bottom exclusive) up by `k`, the rows entering at
    /// the bottom blank in the default colours. The region stays set for the next frame's
    /// scroll; setting it puts the cursor at the top left, scrolling does not move it.
    pub fn scroll_up(&mut self, out: &mut Vec<u8>, top: u16, bottom: u16, k: u16) {
        // Rows entering are erased with the pen's background (and, in some terminals, its
        // reverse video); a foreground or bold does not show on a blank.
        let blank_safe = matches!(self.style, Some(s)
            if s.bg == Color::Reset && !s.modifier.contains(Modifier::REVERSED));
        if !blank_safe {
            out.extend_from_slice(b"\x1b[m");
            self.style = Some(CellStyle::plain());
        }
        if self.region != Some((top, bottom)) {
            let _ = write!(out, "\x1b[{};{}r", top + 1, bottom);
            self.region = Some((top, bottom));
            self.at = Some((0, 0));
        }
        if k == 1 {
            out.extend_from_slice(b"\x1b[S");
        } else {
            let _ = write!(out, "\x1b[{k}S");
        }
    }

    /// Writes one cell at (x, y) of a screen `width` columns wide.
    pub fn cell(&mut self, out: &mut Vec<u8>, x: u16, y: u16, cell: &Cell, width: u16) {
        self.move_to(out, x, y);
        self.set_style(out, CellStyle::of(cell));
        let symbol = cell.symbol();
        out.extend_from_slice(symbol.as_bytes());
        // A wide character or the last column leave the cursor where terminals disagree.
        self.at = (symbol.width() == 1 && x + 1 < width).then_some((x + 1, y));
    }

    /// Leaves the terminal's style as it found it: for whoever writes after the viewer.
    pub fn reset(&mut self, out: &mut Vec<u8>) {
        if self.style != Some(CellStyle::plain()) {
            out.extend_from_slice(b"\x1b[m");
            self.style = Some(CellStyle::plain());
        }
    }

    /// Bytes of a forward move by `n` columns.
    pub fn forward_cost(n: u16) -> usize {
        if n == 1 { 3 } else { 3 + n.to_string().len() }
    }

    fn move_to(&mut self, out: &mut Vec<u8>, x: u16, y: u16) {
        match self.at {
            Some(at) if at == (x, y) => {}
            // Forward on the same row: CUF is shorter than a full position.
            Some((cx, cy)) if cy == y && x > cx => {
                let n = x - cx;
                if n == 1 {
                    out.extend_from_slice(b"\x1b[C");
                } else {
                    let _ = write!(out, "\x1b[{n}C");
                }
            }
            _ if x == 0 => {
                let _ = write!(out, "\x1b[{}H", y + 1);
            }
            _ => {
                let _ = write!(out, "\x1b[{};{}H", y + 1, x + 1);
            }
        }
        self.at = Some((x, y));
    }

    /// One SGR sequence from the pen's style to `to`: a reset first when an attribute must go
    /// (SGR has no single "off" for each, and `0` is shorter than their sum).
    fn set_style(&mut self, out: &mut Vec<u8>, to: CellStyle) {
        let from = match self.style {
            Some(s) if s == to => return,
            Some(s) if s.modifier.difference(to.modifier).is_empty() => s,
            _ => {
                let mut params = vec!["0".to_string()];
                params.extend(style_params(CellStyle::plain(), to));
                write_sgr(out, &params);
                self.style = Some(to);
                return;
            }
        };
        write_sgr(out, &style_params(from, to));
        self.style = Some(to);
    }
}

fn write_sgr(out: &mut Vec<u8>, params: &[String]) {
    out.extend_from_slice(b"\x1b[");
    out.extend_from_slice(params.join(";").as_bytes());
    out.push(b'm');
}

/// The parameters that take a pen from `from` to `to`, where `to` only adds attributes.
fn style_params(from: CellStyle, to: CellStyle) -> Vec<String> {
    let mut params = Vec::new();
    for (flag, code) in [
        (Modifier::BOLD, "1"),
        (Modifier::DIM, "2"),
        (Modifier::ITALIC, "3"),
        (Modifier::UNDERLINED, "4"),
        (Modifier::SLOW_BLINK, "5"),
        (Modifier::RAPID_BLINK, "6"),
        (Modifier::REVERSED, "7"),
        (Modifier::HIDDEN, "8"),
        (Modifier::CROSSED_OUT, "9"),
    ] {
        if to.modifier.contains(flag) && !from.modifier.contains(flag) {
            params.push(code.to_string());
        }
    }
    if to.fg != from.fg {
        params.push(color(to.fg, Layer::Fg));
    }
    if to.bg != from.bg {
        params.push(color(to.bg, Layer::Bg));
    }
    if to.underline != from.underline {
        params.push(color(to.underline, Layer::Underline));
    }
    params
}

#[derive(Clone, Copy)]
enum Layer {
    Fg,
    Bg,
    Underline,
}

/// A colour's SGR parameters: the 16 named colours in their short forms (30–37, 90–97).
fn color(c: Color, layer: Layer) -> String {
    let (base, bright, reset, extended) = match layer {
        Layer::Fg => (30, 90, 39, 38),
        Layer::Bg => (40, 100, 49, 48),
        Layer::Underline => (0, 0, 59, 58),
    };
    let named = |n: u8| -> String {
        match layer {
            Layer::Underline => format!("58;5;{n}"),
            _ if n < 8 => (base + u16::from(n)).to_string(),
            _ => (bright + u16::from(n) - 8).to_string(),
        }
    };
    match c {
        Color::Reset => reset.to_string(),
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
        Color::Indexed(n) => format!("{extended};5;{n}"),
        Color::Rgb(r, g, b) => format!("{extended};2;{r};{g};{b}"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn written(f: impl FnOnce(&mut Pen, &mut Vec<u8>)) -> String {
        let mut pen = Pen {
            at: Some((0, 0)),
            style: Some(CellStyle::plain()),
            region: Some(WHOLE),
        };
        let mut out = Vec::new();
        f(&mut pen, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn consecutive_cells_of_one_style_cost_only_their_characters() {
        let s = written(|pen, out| {
            pen.cell(out, 0, 0, &Cell::new("a"), 80);
            pen.cell(out, 1, 0, &Cell::new("b"), 80);
        });
        assert_eq!(s, "ab");
    }

    #[test]
    fn a_gap_on_the_same_row_moves_forward_and_a_new_row_moves_to_its_start() {
        let s = written(|pen, out| {
            pen.cell(out, 5, 0, &Cell::new("a"), 80);
            pen.cell(out, 0, 3, &Cell::new("b"), 80);
            pen.cell(out, 7, 4, &Cell::new("c"), 80);
        });
        assert_eq!(s, "\x1b[5Ca\x1b[4Hb\x1b[5;8Hc");
    }

    #[test]
    fn removing_an_attribute_resets_then_sets_what_remains() {
        let mut bold_red = Cell::new("a");
        bold_red.set_style(Style::default().fg(Color::Red).bold());
        let mut red = Cell::new("b");
        red.set_style(Style::default().fg(Color::Red));
        let s = written(|pen, out| {
            pen.cell(out, 0, 0, &bold_red, 80);
            pen.cell(out, 1, 0, &red, 80);
        });
        assert_eq!(s, "\x1b[1;31ma\x1b[0;31mb");
    }

    #[test]
    fn after_the_last_column_or_a_wide_character_the_next_cell_moves_explicitly() {
        let s = written(|pen, out| {
            pen.cell(out, 79, 0, &Cell::new("a"), 80);
            pen.cell(out, 0, 1, &Cell::new("界"), 80);
            pen.cell(out, 2, 1, &Cell::new("b"), 80);
        });
        assert_eq!(s, "\x1b[79Ca\x1b[2H界\x1b[2;3Hb");
    }

    #[test]
    fn scrolling_resets_a_coloured_pen_so_new_rows_are_blank_in_default_colours() {
        let s = written(|pen, out| {
            pen.style = Some(CellStyle {
                bg: Color::Blue,
                ..CellStyle::plain()
            });
            pen.scroll_up(out, 5, 20, 3);
        });
        assert_eq!(s, "\x1b[m\x1b[6;20r\x1b[3S");
    }

    #[test]
    fn the_region_stays_set_so_the_next_scroll_of_it_costs_only_the_scroll() {
        let s = written(|pen, out| {
            pen.scroll_up(out, 5, 20, 1);
            pen.cell(out, 0, 19, &Cell::new("a"), 80);
            pen.scroll_up(out, 5, 20, 1);
            pen.scroll_up(out, 2, 20, 1);
        });
        assert_eq!(s, "\x1b[6;20r\x1b[S\x1b[20Ha\x1b[S\x1b[3;20r\x1b[S");
    }

    #[test]
    fn a_whole_frame_and_leaving_set_the_whole_screen_as_region_once() {
        let s = written(|pen, out| {
            pen.whole_region(out);
            pen.scroll_up(out, 5, 20, 1);
            pen.clear_screen(out);
            pen.whole_region(out);
        });
        assert_eq!(s, "\x1b[6;20r\x1b[S\x1b[r\x1b[m\x1b[?25l\x1b[2J");
    }

    #[test]
    fn a_pen_that_knows_nothing_sets_the_whole_region_before_clearing() {
        let mut pen = Pen::unknown();
        let mut out = Vec::new();
        pen.clear_screen(&mut out);
        assert!(out.starts_with(b"\x1b[r"));
    }
}
