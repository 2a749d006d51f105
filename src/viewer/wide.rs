//! Wide characters (CJK, emoji) take two columns on a terminal but one cell each in a buffer,
//! the next left blank. Two things follow that a cell-by-cell diff does not see: a frame can
//! put something in a wide character's right half (an overlay's border over a CJK line), which
//! no terminal can show; and a terminal erases what is left of a wide character a write broke
//! into, with whatever style its pen has then.

use ratatui::buffer::{Buffer, Cell};
use unicode_width::UnicodeWidthStr;

/// A wide character whose right half another widget drew over (an overlay's border over a
/// CJK line) cannot be shown whole by any terminal: it becomes a blank in its style, and what
/// was drawn over it stays, as a terminal shows it after a whole redraw.
pub fn settle(buffer: &mut Buffer) {
    let width = usize::from(buffer.area.width);
    if width == 0 {
        return;
    }
    for row in buffer.content.chunks_mut(width) {
        let mut x = 0;
        while x < row.len() {
            let w = columns(&row[x]).max(1);
            if w > 1 {
                let covered = row
                    .get(x + 1..x + w)
                    .is_none_or(|rest| rest.iter().any(|c| c.symbol() != " "));
                if covered {
                    row[x].set_symbol(" ");
                    x += 1;
                    continue;
                }
            }
            x += w;
        }
    }
}

/// A copy of `from` (what the terminal shows) in which the cells a terminal will erase while
/// `to` is written over it (the rest of each wide character a new cell breaks into) hold a
/// mark that equals no cell, so the diff writes them again; None when there are none.
pub fn mark_erasures(from: &Buffer, to: &Buffer) -> Option<Buffer> {
    let width = usize::from(from.area.width);
    if width == 0 || from.area != to.area {
        return None;
    }
    let mut marked: Option<Buffer> = None;
    for (y, (old, new)) in from
        .content
        .chunks(width)
        .zip(to.content.chunks(width))
        .enumerate()
    {
        for x in 0..width {
            let was = columns(&old[x]);
            if was < 2 || old[x] == new[x] && columns(&new[x]) == was {
                continue;
            }
            // The old wide character at x is written over: what the new cell does not cover
            // of its columns is erased by the terminal.
            let covers = columns(&new[x]).max(1);
            for gone in x + covers..(x + was).min(width) {
                let buffer = marked.get_or_insert_with(|| from.clone());
                buffer.content[y * width + gone] = erased();
            }
        }
        // A new wide character that covers the left half of an old one erases its right half.
        for x in 0..width {
            let now = columns(&new[x]);
            if now < 2 || old[x] == new[x] {
                continue;
            }
            let end = (x + now).min(width);
            for (p, cell) in old.iter().enumerate().take(end).skip(x + 1) {
                let was = columns(cell);
                for gone in x + now..(p + was).min(width) {
                    let buffer = marked.get_or_insert_with(|| from.clone());
                    buffer.content[y * width + gone] = erased();
                }
            }
        }
    }
    marked
}

/// The columns a cell's symbol takes, as far as the functions above ask (whether it is wide, and
/// how wide): one byte (ASCII, nearly every cell) is one column without a lookup, since both
/// look at every cell of every frame.
fn columns(cell: &Cell) -> usize {
    let symbol = cell.symbol();
    if symbol.len() == 1 { 1 } else { symbol.width() }
}

/// A cell no frame holds (a bidirectional override: `ui` keeps frames free of them): always
/// written over.
fn erased() -> Cell {
    let mut cell = Cell::EMPTY;
    cell.set_symbol("\u{202e}");
    cell
}
