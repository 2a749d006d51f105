//! Colours and styles. 16-colour safe (ANSI base colours only); `NO_COLOR` turns colour off and
//! keeps only bold and reverse, which every terminal has.

use ratatui::style::{Color, Modifier, Style};

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
