//! Whether a band of whole rows moved up between what the terminal shows and the next frame,
//! proven from the two buffers alone (whatever the UI meant to draw), and the same move applied
//! to the shown buffer, so it stays exactly what the terminal shows after scrolling.

use std::hash::{Hash, Hasher};

use ratatui::buffer::{Buffer, Cell};

/// A band of rows `top..bottom` (bottom exclusive) scrolled up by `by` rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scroll {
    pub top: u16,
    pub bottom: u16,
    pub by: u16,
}

/// How many shifts are tried, smallest first: repeated rows can make several agree.
const MAX_CANDIDATES: usize = 4;

/// Every shift `by` ≥ 1 (smallest first, a few at most) for which the new band's rows
/// `top..bottom-by` are the old band's rows `top+by..bottom`, cell for cell. Both buffers must
/// be of the same size; a band outside them or of fewer than two rows gives nothing.
pub fn candidates(old: &Buffer, new: &Buffer, top: u16, bottom: u16) -> Vec<Scroll> {
    let area = new.area;
    if old.area != area || bottom > area.height || top + 2 > bottom || area.width == 0 {
        return Vec::new();
    }
    let old_hashes: Vec<u64> = (top..bottom).map(|y| row_hash(old, y)).collect();
    let new_hashes: Vec<u64> = (top..bottom).map(|y| row_hash(new, y)).collect();
    let height = usize::from(bottom - top);
    let mut found = Vec::new();
    for by in 1..height {
        let agree = (0..height - by).all(|i| new_hashes[i] == old_hashes[i + by]);
        // Hashes only suggest; the cells decide.
        let by16 = by as u16;
        if agree && (top..bottom - by16).all(|y| row(new, y) == row(old, y + by16)) {
            found.push(Scroll {
                top,
                bottom,
                by: by16,
            });
            if found.len() == MAX_CANDIDATES {
                break;
            }
        }
    }
    found
}

/// Moves the band's rows up as the terminal does, the rows entering at the bottom blank in the
/// default style (what a terminal fills them with after its style was reset).
pub fn apply(buffer: &mut Buffer, scroll: Scroll) {
    let width = usize::from(buffer.area.width);
    let start = usize::from(scroll.top) * width;
    let end = usize::from(scroll.bottom) * width;
    let shift = usize::from(scroll.by) * width;
    if end > buffer.content.len() || start + shift > end {
        return;
    }
    buffer.content[start..end].rotate_left(shift);
    for cell in &mut buffer.content[end - shift..end] {
        *cell = Cell::EMPTY;
    }
}

fn row(buffer: &Buffer, y: u16) -> &[Cell] {
    let width = usize::from(buffer.area.width);
    let start = usize::from(y) * width;
    &buffer.content[start..start + width]
}

fn row_hash(buffer: &Buffer, y: u16) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    row(buffer, y).hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use ratatui::layout::Rect;

    use super::*;

    fn rows(lines: &[&str]) -> Buffer {
        let mut b = Buffer::empty(Rect::new(0, 0, 4, lines.len() as u16));
        for (y, line) in lines.iter().enumerate() {
            b.set_string(0, y as u16, line, ratatui::style::Style::default());
        }
        b
    }

    #[test]
    fn two_new_lines_at_the_bottom_are_a_scroll_by_two() {
        let old = rows(&["head", "a", "b", "c", "d", "foot"]);
        let new = rows(&["head", "c", "d", "e", "f", "foot"]);
        assert_eq!(
            candidates(&old, &new, 1, 5),
            vec![Scroll {
                top: 1,
                bottom: 5,
                by: 2
            }]
        );
    }

    #[test]
    fn rows_that_did_not_move_are_no_scroll() {
        let old = rows(&["a", "b", "c"]);
        let new = rows(&["a", "x", "c"]);
        assert!(candidates(&old, &new, 0, 3).is_empty());
    }

    #[test]
    fn a_band_outside_the_screen_is_refused_not_a_panic() {
        let old = rows(&["a", "b"]);
        assert!(candidates(&old, &old, 1, 9).is_empty());
        assert!(candidates(&old, &old, 1, 2).is_empty());
    }

    #[test]
    fn applying_a_scroll_moves_rows_up_and_blanks_the_bottom_ones() {
        let mut b = rows(&["head", "a", "b", "c", "foot"]);
        apply(
            &mut b,
            Scroll {
                top: 1,
                bottom: 4,
                by: 2,
            },
        );
        assert_eq!(b, rows(&["head", "c", "", "", "foot"]));
    }
}
