//! Colours and styles. 16-colour safe (ANSI base colours only); `NO_COLOR` turns colour off and
//! keeps only bold and reverse, which every terminal has.

use ratatui::style::{Color, Modifier, Style};

use crate::sanitize::sgr::{Ink, Tint, marks};

/// SGR colours 0–15 (30–37, 90–97) as ratatui names them.
const BASE: [Color; 16] = [
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    color: bool,
}

impl Theme {
    pub fn from_env() -> Self {
        Self {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    pub fn plain() -> Self {
        Self { color: false }
    }

    pub fn colored() -> Self {
        Self { color: true }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    pub fn good(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn busy(&self) -> Style {
        self.fg(Color::Yellow)
    }
    /// Something to look at, not yet wrong: the cluster has drifted from the config.
    pub fn warning(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }
    pub fn bad(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        }
    }
    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    pub fn focused_border(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Cyan)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }
    pub fn border(&self) -> Style {
        self.dim()
    }
    pub fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }
    pub fn badge(&self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }
    /// A log line's own colours and emphasis (SGR from the container); only the emphasis
    /// under `NO_COLOR`.
    pub fn ink(&self, ink: Ink) -> Style {
        let tint = |t: Tint| match t {
            Tint::Default => None,
            // The sixteen base colours by name: the short form every terminal knows.
            Tint::Indexed(i) => Some(
                BASE.get(usize::from(i))
                    .copied()
                    .unwrap_or(Color::Indexed(i)),
            ),
            Tint::Rgb(r, g, b) => Some(Color::Rgb(r, g, b)),
        };
        let mut style = Style::new();
        if self.color {
            if let Some(fg) = tint(ink.fg) {
                style = style.fg(fg);
            }
            if let Some(bg) = tint(ink.bg) {
                style = style.bg(bg);
            }
        }
        for (bit, modifier) in [
            (marks::BOLD, Modifier::BOLD),
            (marks::DIM, Modifier::DIM),
            (marks::ITALIC, Modifier::ITALIC),
            (marks::UNDERLINE, Modifier::UNDERLINED),
            (marks::REVERSE, Modifier::REVERSED),
            (marks::CROSSED, Modifier::CROSSED_OUT),
        ] {
            if ink.marks & bit != 0 {
                style = style.add_modifier(modifier);
            }
        }
        style
    }

    pub fn highlight(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Black).bg(Color::Yellow)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }
    pub fn key(&self) -> Style {
        if self.color {
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }

    /// A stable colour per pod, for merged logs.
    pub fn pod(&self, index: u32) -> Style {
        const PALETTE: [Color; 6] = [
            Color::Cyan,
            Color::Magenta,
            Color::Green,
            Color::Yellow,
            Color::Blue,
            Color::Red,
        ];
        self.fg(PALETTE[index as usize % PALETTE.len()])
    }

    /// Style of a status word: GKE's cluster statuses, Job and pod phases and reasons.
    pub fn status(&self, status: &str) -> Style {
        match status {
            "RUNNING" | "Running" | "Succeeded" | "Complete" | "Completed" | "Ready" => self.good(),
            "PROVISIONING" | "STOPPING" | "RECONCILING" | "Pending" | "ContainerCreating"
            | "Terminating" => self.busy(),
            "ERROR"
            | "DEGRADED"
            | "Failed"
            | "Error"
            | "OOMKilled"
            | "ImagePullBackOff"
            | "ErrImagePull"
            | "CrashLoopBackOff"
            | "Unschedulable"
            | "BackoffLimitExceeded"
            | "DeadlineExceeded" => self.bad(),
            _ => Style::new(),
        }
    }
}
