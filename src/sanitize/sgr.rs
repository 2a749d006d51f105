//! The one escape sequence screen mode reads rather than drops: SGR (`ESC [ … m`), a log
//! line's colours and emphasis. Read into a compact [`Ink`] of its own (no terminal or UI type),
//! so a held line's styles cost a few bytes and the screen decides how to draw them: a line
//! coloured by the container reads in the TUI as it did in a terminal, and nothing else a
//! sequence could do (move the cursor, retitle, write the clipboard) gets through.

/// A colour as SGR names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tint {
    #[default]
    Default,
    /// 0–7 the base colours, 8–15 their bright forms, 16–255 the 256-colour cube and greys.
    Indexed(u8),
    Rgb(u8, u8, u8),
}

/// Emphasis bits of an [`Ink`].
pub mod marks {
    pub const BOLD: u8 = 1;
    pub const DIM: u8 = 1 << 1;
    pub const ITALIC: u8 = 1 << 2;
    pub const UNDERLINE: u8 = 1 << 3;
    pub const REVERSE: u8 = 1 << 4;
    pub const CROSSED: u8 = 1 << 5;
}

/// How a stretch of text was meant to look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ink {
    pub fg: Tint,
    pub bg: Tint,
    /// [`marks`] bits.
    pub marks: u8,
}

impl Ink {
    pub fn is_plain(&self) -> bool {
        *self == Ink::default()
    }

    /// Applies one SGR sequence's parameters (what is between `ESC [` and `m`). Unknown or
    /// malformed parameters change nothing; an empty list resets, as terminals do.
    pub fn apply(&mut self, params: &str) {
        if params.is_empty() {
            *self = Ink::default();
            return;
        }
        let mut groups = params.split(';');
        while let Some(group) = groups.next() {
            // `38:2::R:G:B` carries its arguments in colon sub-parameters; `38;5;N` in the
            // groups that follow.
            let mut parts = group.split(':');
            let Some(code) = parts.next().map(number) else {
                continue;
            };
            match code {
                Some(0) => *self = Ink::default(),
                Some(1) => self.marks |= marks::BOLD,
                Some(2) => self.marks |= marks::DIM,
                Some(3) => self.marks |= marks::ITALIC,
                Some(4) => match parts.next().map(number) {
                    Some(Some(0)) => self.marks &= !marks::UNDERLINE,
                    _ => self.marks |= marks::UNDERLINE,
                },
                Some(7) => self.marks |= marks::REVERSE,
                Some(9) => self.marks |= marks::CROSSED,
                Some(21) => self.marks |= marks::UNDERLINE,
                Some(22) => self.marks &= !(marks::BOLD | marks::DIM),
                Some(23) => self.marks &= !marks::ITALIC,
                Some(24) => self.marks &= !marks::UNDERLINE,
                Some(27) => self.marks &= !marks::REVERSE,
                Some(29) => self.marks &= !marks::CROSSED,
                Some(n @ 30..=37) => self.fg = Tint::Indexed((n - 30) as u8),
                Some(n @ 40..=47) => self.bg = Tint::Indexed((n - 40) as u8),
                Some(n @ 90..=97) => self.fg = Tint::Indexed((n - 90 + 8) as u8),
                Some(n @ 100..=107) => self.bg = Tint::Indexed((n - 100 + 8) as u8),
                Some(39) => self.fg = Tint::Default,
                Some(49) => self.bg = Tint::Default,
                Some(n @ (38 | 48)) => {
                    let sub: Vec<&str> = parts.collect();
                    let tint = if sub.is_empty() {
                        extended(&mut groups)
                    } else {
                        extended_colon(&sub)
                    };
                    if let Some(tint) = tint {
                        if n == 38 {
                            self.fg = tint;
                        } else {
                            self.bg = tint;
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

fn number(text: &str) -> Option<u32> {
    if text.is_empty() {
        return Some(0);
    }
    text.parse().ok()
}

fn byte(text: Option<&str>) -> Option<u8> {
    text.and_then(|t| t.parse().ok())
}

/// `5;N` or `2;R;G;B` in the groups after a 38 or 48.
fn extended<'a>(groups: &mut impl Iterator<Item = &'a str>) -> Option<Tint> {
    match groups.next()? {
        "5" => byte(groups.next()).map(Tint::Indexed),
        "2" => {
            let (r, g, b) = (groups.next(), groups.next(), groups.next());
            Some(Tint::Rgb(byte(r)?, byte(g)?, byte(b)?))
        }
        _ => None,
    }
}

/// `5:N`, `2:R:G:B` or `2::R:G:B` (with an empty colour-space id) after `38:`.
fn extended_colon(sub: &[&str]) -> Option<Tint> {
    match sub {
        ["5", n, ..] => byte(Some(n)).map(Tint::Indexed),
        ["2", _, r, g, b, ..] => Some(Tint::Rgb(byte(Some(r))?, byte(Some(g))?, byte(Some(b))?)),
        ["2", r, g, b] => Some(Tint::Rgb(byte(Some(r))?, byte(Some(g))?, byte(Some(b))?)),
        _ => None,
    }
}

/// From byte `start` of a line's sanitised text on, until the next run, text looks as `ink`
/// says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub start: u32,
    pub ink: Ink,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ink(params: &str) -> Ink {
        let mut ink = Ink::default();
        ink.apply(params);
        ink
    }

    #[test]
    fn base_bright_256_and_true_colours_are_read() {
        assert_eq!(ink("31").fg, Tint::Indexed(1));
        assert_eq!(ink("1;32").fg, Tint::Indexed(2));
        assert_eq!(ink("1;32").marks, marks::BOLD);
        assert_eq!(ink("94").fg, Tint::Indexed(12));
        assert_eq!(ink("103").bg, Tint::Indexed(11));
        assert_eq!(ink("38;5;208").fg, Tint::Indexed(208));
        assert_eq!(ink("48;2;10;20;30").bg, Tint::Rgb(10, 20, 30));
        assert_eq!(ink("38:2::1:2:3").fg, Tint::Rgb(1, 2, 3));
        assert_eq!(ink("38:5:9").fg, Tint::Indexed(9));
    }

    #[test]
    fn resets_undo_what_they_name_and_nothing_else() {
        let mut i = ink("1;3;4;31;42");
        i.apply("22");
        assert_eq!(i.marks, marks::ITALIC | marks::UNDERLINE);
        i.apply("39");
        assert_eq!((i.fg, i.bg), (Tint::Default, Tint::Indexed(2)));
        i.apply("4:0");
        assert_eq!(i.marks, marks::ITALIC);
        i.apply("");
        assert!(i.is_plain());
        let mut j = ink("35");
        j.apply("0");
        assert!(j.is_plain());
    }

    #[test]
    fn malformed_parameters_change_nothing_and_never_panic() {
        for params in [
            "38;5",
            "38;2;1;2",
            "38;5;300",
            "x;y",
            "99999999999",
            ";;;",
            "48:2",
        ] {
            let got = ink(params);
            assert_eq!(got.marks, 0, "{params}");
        }
        assert_eq!(ink(";31").fg, Tint::Indexed(1));
    }
}
