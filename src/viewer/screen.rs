//! A viewer's screen: frames rendered whole into a buffer, written as the fewest bytes that
//! take the terminal from what it shows to the frame. It keeps its own copy of what the
//! terminal shows, so where a band of whole rows moved up (the logs pane following new lines)
//! it can let the terminal scroll them (a scroll region, then scroll-up, as `less` and tmux do)
//! and write only the rows that came in, instead of rewriting every row.
//!
//! Scrolling is used only where the two buffers prove it and it costs fewer bytes; the frame is
//! drawn whole at the start, after a resize and after a frame was lost on its way.

use std::io::{self, Write};

use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::{Buffer, Cell, CellDiffOption};
use ratatui::layout::{Position, Rect, Size};
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};
use unicode_width::UnicodeWidthStr;

use super::ansi::{CellStyle, Pen};
use super::{scroll, wide};

/// What a frame cost on the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    pub bytes: usize,
    /// Rows the terminal scrolled instead of being written again.
    pub scrolled: u16,
}

/// A frame's bytes, rendered and not yet written.
pub struct Encoded {
    bytes: Vec<u8>,
    written: Written,
}

pub struct Screen<W: Write> {
    /// Renders frames into a buffer; its backend writes nothing.
    renderer: Terminal<Unseen>,
    /// What the terminal shows (after the last frame written).
    shown: Buffer,
    pen: Pen,
    /// The next frame is drawn whole.
    whole: bool,
    out: W,
}

impl<W: Write> Screen<W> {
    /// A screen of `size` writing into `out` (a terminal already in the alternate screen).
    pub fn new(out: W, size: Rect) -> io::Result<Self> {
        Ok(Self {
            renderer: renderer(size)?,
            shown: Buffer::empty(size),
            pen: Pen::unknown(),
            whole: true,
            out,
        })
    }

    /// The terminal is now `size`: the next frame is drawn whole.
    pub fn resize(&mut self, size: Rect) -> io::Result<()> {
        self.renderer = renderer(size)?;
        self.shown = Buffer::empty(size);
        self.whole = true;
        // Terminals differ on what a resize does to the scroll region: set it again.
        self.pen.region = None;
        Ok(())
    }

    /// What the terminal shows is not known any more (a frame was lost): draw the next whole.
    pub fn redraw_whole(&mut self) {
        self.whole = true;
        self.pen.region = None;
    }

    /// Renders a frame and writes what changed. `band` is where rows may have scrolled (rows
    /// `top..bottom`): a hint, checked against the buffers before it is used.
    pub fn draw(
        &mut self,
        band: Option<(u16, u16)>,
        render: impl FnOnce(&mut Frame),
    ) -> io::Result<Written> {
        let frame = self.render(band, render)?;
        self.write(frame)
    }

    /// Renders a frame into the bytes that show it, writing nothing: what is drawn from the
    /// engine's model is encoded while the model is read, and written after it is let go
    /// ([`Screen::write`]), so a terminal that does not read holds up nobody but its viewer.
    pub fn render(
        &mut self,
        band: Option<(u16, u16)>,
        render: impl FnOnce(&mut Frame),
    ) -> io::Result<Encoded> {
        let next = self
            .renderer
            .draw(|frame| {
                render(frame);
                wide::settle(frame.buffer_mut());
            })?
            .buffer;
        let (bytes, pen, written) = encode(&self.shown, &self.pen, next, band, self.whole);
        if self.shown.area == next.area {
            self.shown.content.clone_from_slice(&next.content);
        } else {
            self.shown = next.clone();
        }
        // Once a frame is computed against `shown`, `shown` is what the terminal will show:
        // if the write fails the viewer ends, and a lost frame is said so by `redraw_whole`.
        self.pen = pen;
        self.whole = false;
        Ok(Encoded { bytes, written })
    }

    /// Writes a rendered frame.
    pub fn write(&mut self, frame: Encoded) -> io::Result<Written> {
        if !frame.bytes.is_empty() {
            self.out.write_all(&frame.bytes)?;
            self.out.flush()?;
        }
        Ok(frame.written)
    }

    /// Leaves the terminal's scroll region whole, its style plain and its cursor shown, for
    /// whoever writes next.
    pub fn finish(&mut self) -> io::Result<()> {
        let mut out = Vec::new();
        self.pen.whole_region(&mut out);
        self.pen.reset(&mut out);
        out.extend_from_slice(b"\x1b[?25h");
        self.out.write_all(&out)?;
        self.out.flush()
    }

    /// Writes what is not a frame and leaves the screen as it is: a bell, a desktop
    /// notification (`notify::terminal_bytes`).
    pub fn ring(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.out.flush()
    }

    pub fn writer_mut(&mut self) -> &mut W {
        &mut self.out
    }
}

/// The bytes that take a terminal showing `shown` (its pen `pen`) to `next`, the pen after,
/// and what it cost: whole (clear, then every cell that is not blank), or as a diff — after
/// scrolling `band` where the buffers prove it moved and that is cheaper.
pub fn encode(
    shown: &Buffer,
    pen: &Pen,
    next: &Buffer,
    band: Option<(u16, u16)>,
    whole: bool,
) -> (Vec<u8>, Pen, Written) {
    let width = next.area.width;
    if whole || shown.area != next.area {
        let mut pen = pen.clone();
        let mut out = Vec::new();
        pen.clear_screen(&mut out);
        write_diff(&mut out, &mut pen, &Buffer::empty(next.area), next, width);
        let written = Written {
            bytes: out.len(),
            scrolled: 0,
        };
        return (out, pen, written);
    }
    let mut best_pen = pen.clone();
    let mut best = Vec::new();
    write_diff(&mut best, &mut best_pen, shown, next, width);
    let mut scrolled = 0;
    let candidates = band
        .map(|(top, bottom)| scroll::candidates(shown, next, top, bottom))
        .unwrap_or_default();
    for candidate in candidates {
        let mut pen = pen.clone();
        let mut out = Vec::new();
        pen.scroll_up(&mut out, candidate.top, candidate.bottom, candidate.by);
        let mut moved = shown.clone();
        scroll::apply(&mut moved, candidate);
        write_diff(&mut out, &mut pen, &moved, next, width);
        if out.len() < best.len() {
            best = out;
            best_pen = pen;
            scrolled = candidate.by;
        }
    }
    let written = Written {
        bytes: best.len(),
        scrolled,
    };
    (best, best_pen, written)
}

fn write_diff(out: &mut Vec<u8>, pen: &mut Pen, from: &Buffer, to: &Buffer, width: u16) {
    let marked = wide::mark_erasures(from, to);
    let from = marked.as_ref().unwrap_or(from);
    for (x, y, cell) in from.diff(to) {
        // A short run of unchanged cells in the pen's style costs less written again than
        // stepped over.
        if let Some((cx, cy)) = pen.at
            && cy == y
            && x > cx
        {
            let gap: Vec<&Cell> = (cx..x).map(|gx| &to[(gx, y)]).collect();
            let bytes: usize = gap.iter().map(|c| c.symbol().len()).sum();
            let fits = gap.iter().all(|c| {
                c.diff_option == CellDiffOption::None
                    && c.symbol().width() == 1
                    && pen.style == Some(CellStyle::of(c))
            });
            if fits && bytes <= Pen::forward_cost(x - cx) {
                for (gx, c) in (cx..x).zip(gap) {
                    pen.cell(out, gx, y, c, width);
                }
            }
        }
        pen.cell(out, x, y, cell, width);
    }
}

fn renderer(size: Rect) -> io::Result<Terminal<Unseen>> {
    Terminal::with_options(
        Unseen(size.as_size()),
        TerminalOptions {
            viewport: Viewport::Fixed(size),
        },
    )
}

/// A backend that shows nothing: `Terminal` is only used to render frames into its buffer
/// (the one public way to build a `Frame`); the screen writes them itself.
struct Unseen(Size);

impl Backend for Unseen {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, _content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        // The diff is lazy: left unread, it costs nothing.
        Ok(())
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        Ok(Position::ORIGIN)
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, _position: P) -> io::Result<()> {
        Ok(())
    }

    fn clear(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn clear_region(&mut self, _clear_type: ClearType) -> io::Result<()> {
        Ok(())
    }

    fn size(&self) -> io::Result<Size> {
        Ok(self.0)
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        Ok(WindowSize {
            columns_rows: self.0,
            pixels: Size::default(),
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
