//! What the operator can ask for. Keys map to these (the keymap), and the app acts on them.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Quit,
    Help,
    Close,
    FocusNext,
    FocusPrev,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    CreateCluster,
    DeleteCluster,
    Plan,
    Launch,
    Retry,
    Delete,
    FollowSelected,
    AllPods,
    ToggleFollow,
    ToggleWrap,
    ToggleTimestamps,
    Previous,
    Search,
    NextMatch,
    PrevMatch,
    ToggleMetrics,
    NextMetric,
    PrevMetric,
    ToggleSmoothing,
}

impl Action {
    /// Every action, in the order the help overlay lists them.
    pub const ALL: [Action; 30] = [
        Action::CreateCluster,
        Action::Launch,
        Action::Retry,
        Action::Delete,
        Action::DeleteCluster,
        Action::Plan,
        Action::FocusNext,
        Action::FocusPrev,
        Action::Up,
        Action::Down,
        Action::PageUp,
        Action::PageDown,
        Action::Top,
        Action::Bottom,
        Action::FollowSelected,
        Action::AllPods,
        Action::ToggleFollow,
        Action::ToggleWrap,
        Action::ToggleTimestamps,
        Action::Previous,
        Action::Search,
        Action::NextMatch,
        Action::PrevMatch,
        Action::ToggleMetrics,
        Action::NextMetric,
        Action::PrevMetric,
        Action::ToggleSmoothing,
        Action::Help,
        Action::Close,
        Action::Quit,
    ];

    /// The name used in the config file's `[keys]` section.
    pub fn name(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "help",
            Action::Close => "close",
            Action::FocusNext => "focus-next",
            Action::FocusPrev => "focus-prev",
            Action::Up => "up",
            Action::Down => "down",
            Action::PageUp => "page-up",
            Action::PageDown => "page-down",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::CreateCluster => "create-cluster",
            Action::DeleteCluster => "delete-cluster",
            Action::Plan => "plan",
            Action::Launch => "launch",
            Action::Retry => "retry",
            Action::Delete => "delete",
            Action::FollowSelected => "follow-selected",
            Action::AllPods => "all-pods",
            Action::ToggleFollow => "toggle-follow",
            Action::ToggleWrap => "toggle-wrap",
            Action::ToggleTimestamps => "toggle-timestamps",
            Action::Previous => "previous",
            Action::Search => "search",
            Action::NextMatch => "next-match",
            Action::PrevMatch => "prev-match",
            Action::ToggleMetrics => "toggle-metrics",
            Action::NextMetric => "next-metric",
            Action::PrevMetric => "prev-metric",
            Action::ToggleSmoothing => "toggle-smoothing",
        }
    }

    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.name() == name)
    }

    /// What the help overlay says it does.
    pub fn description(self) -> &'static str {
        match self {
            Action::Quit => "quit (deletes nothing)",
            Action::Help => "this help",
            Action::Close => "close overlay or search",
            Action::FocusNext => "next pane",
            Action::FocusPrev => "previous pane",
            Action::Up => "move / scroll up",
            Action::Down => "move / scroll down",
            Action::PageUp => "page up",
            Action::PageDown => "page down",
            Action::Top => "first line",
            Action::Bottom => "last line, follow",
            Action::CreateCluster => "create the cluster (asks)",
            Action::DeleteCluster => "delete cluster (type name)",
            Action::Plan => "show the plan (y applies)",
            Action::Launch => "launch the training Job",
            Action::Retry => "retry: a new attempt",
            Action::Delete => "delete attempt or pod (asks)",
            Action::FollowSelected => "logs of the selected pod",
            Action::AllPods => "logs of all pods, merged",
            Action::ToggleFollow => "follow on/off",
            Action::ToggleWrap => "wrap long lines on/off",
            Action::ToggleTimestamps => "timestamps on/off",
            Action::Previous => "previous container's logs",
            Action::Search => "search the logs",
            Action::NextMatch => "next match",
            Action::PrevMatch => "previous match",
            Action::ToggleMetrics => "metrics chart on/off",
            Action::NextMetric => "next metric",
            Action::PrevMetric => "previous metric",
            Action::ToggleSmoothing => "smoothing on/off",
        }
    }

    /// Whether the action would change something in the cloud. Every action is named: a new
    /// one does not compile until it is classed. (The plan's overlay changes nothing itself;
    /// applying it from there is `ApplyPlan`, through the same gate.)
    pub fn mutates(self) -> bool {
        match self {
            Action::CreateCluster
            | Action::DeleteCluster
            | Action::Launch
            | Action::Retry
            | Action::Delete => true,
            Action::Quit
            | Action::Help
            | Action::Close
            | Action::FocusNext
            | Action::FocusPrev
            | Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom
            | Action::Plan
            | Action::FollowSelected
            | Action::AllPods
            | Action::ToggleFollow
            | Action::ToggleWrap
            | Action::ToggleTimestamps
            | Action::Previous
            | Action::Search
            | Action::NextMatch
            | Action::PrevMatch
            | Action::ToggleMetrics
            | Action::NextMetric
            | Action::PrevMetric
            | Action::ToggleSmoothing => false,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each action's place in `ALL`, by an exhaustive match: a new action does not compile
    /// until it has one, and the places must be those of `ALL` (the help, the key table).
    fn place(action: Action) -> usize {
        match action {
            Action::Quit => 0,
            Action::Help => 1,
            Action::Close => 2,
            Action::FocusNext => 3,
            Action::FocusPrev => 4,
            Action::Up => 5,
            Action::Down => 6,
            Action::PageUp => 7,
            Action::PageDown => 8,
            Action::Top => 9,
            Action::Bottom => 10,
            Action::CreateCluster => 11,
            Action::DeleteCluster => 12,
            Action::Plan => 13,
            Action::Launch => 14,
            Action::Retry => 15,
            Action::Delete => 16,
            Action::FollowSelected => 17,
            Action::AllPods => 18,
            Action::ToggleFollow => 19,
            Action::ToggleWrap => 20,
            Action::ToggleTimestamps => 21,
            Action::Previous => 22,
            Action::Search => 23,
            Action::NextMatch => 24,
            Action::PrevMatch => 25,
            Action::ToggleMetrics => 26,
            Action::NextMetric => 27,
            Action::PrevMetric => 28,
            Action::ToggleSmoothing => 29,
        }
    }

    #[test]
    fn every_action_is_listed_once_with_a_name_and_a_help_line() {
        let mut seen = [false; Action::ALL.len()];
        for action in Action::ALL {
            let at = place(action);
            assert!(at < seen.len(), "{action:?} is not in Action::ALL");
            assert!(!seen[at], "{action:?} is listed twice");
            seen[at] = true;
            assert!(!action.name().is_empty() && !action.description().is_empty());
        }
        assert!(seen.iter().all(|s| *s));
    }
}
