//! A client's screen size, as it says it and as it is drawn: never larger than `MAX_COLS` ×
//! `MAX_ROWS`, whatever a pty request or a window change claims, so that nothing is allocated
//! for a screen no terminal has (a 60000×60000 pty asked for 172 GB).

/// The largest screen drawn for a client, whatever size it says its terminal is.
pub const MAX_COLS: u16 = 500;
pub const MAX_ROWS: u16 = 200;

/// A client's screen size as drawn, and what it asked for when that was more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub cols: u16,
    pub rows: u16,
    pub asked: Option<(u32, u32)>,
}

impl Size {
    /// The size a client asked for, clamped to what is drawn.
    pub fn clamped(cols: u32, rows: u32) -> Size {
        let c = cols.min(u32::from(MAX_COLS)) as u16;
        let r = rows.min(u32::from(MAX_ROWS)) as u16;
        let asked =
            (cols > u32::from(MAX_COLS) || rows > u32::from(MAX_ROWS)).then_some((cols, rows));
        Size {
            cols: c,
            rows: r,
            asked,
        }
    }
}

/// What the client is told when its terminal is larger than what is drawn.
pub fn too_large(size: &Size) -> Option<String> {
    size.asked.map(|(cols, rows)| {
        format!("your terminal is {cols}×{rows}: drawn at {MAX_COLS}×{MAX_ROWS} at most")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_past_the_largest_is_clamped_and_says_what_was_asked() {
        let huge = Size::clamped(60000, 60000);
        assert_eq!((huge.cols, huge.rows), (MAX_COLS, MAX_ROWS));
        assert_eq!(huge.asked, Some((60000, 60000)));
        assert!(too_large(&huge).is_some_and(|t| t.contains("60000×60000")));
        let usual = Size::clamped(80, 24);
        assert_eq!((usual.cols, usual.rows, usual.asked), (80, 24, None));
        assert_eq!(too_large(&usual), None);
        let zero = Size::clamped(0, u32::MAX);
        assert_eq!((zero.cols, zero.rows), (0, MAX_ROWS));
    }
}
