//! A leaf every layer may print through. Where every command's output goes, and how it is made safe on the way: what the cluster or
//! the cloud sent (log lines, messages, reasons) is inert on a terminal and exact in a pipe or a
//! file. Set once from `--color` and `--raw` before a command runs; commands print only through
//! `outln!` and `errln!` (and `ask`), so no text reaches a terminal another way.

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

use crate::sanitize::{self, Mode};

/// `--color`: whether colour sequences from the cluster reach a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// How stdout and stderr are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Output {
    pub stdout: Mode,
    pub stderr: Mode,
}

static OUTPUT: OnceLock<Output> = OnceLock::new();

impl Output {
    /// The modes for these flags, these streams and this environment. `--raw` is for what a
    /// command prints (stdout); notes on stderr stay inert on a terminal.
    pub fn choose(
        color: ColorChoice,
        raw: bool,
        stdout_is_terminal: bool,
        stderr_is_terminal: bool,
        no_color: bool,
    ) -> Self {
        let mode = |terminal: bool| {
            if !terminal {
                return Mode::Raw;
            }
            let color = match color {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => !no_color,
            };
            Mode::Terminal { color }
        };
        Self {
            stdout: if raw {
                Mode::Raw
            } else {
                mode(stdout_is_terminal)
            },
            stderr: mode(stderr_is_terminal),
        }
    }

    /// From the flags and this process's streams and `NO_COLOR` (set and not empty).
    pub fn detect(color: ColorChoice, raw: bool) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self::choose(
            color,
            raw,
            std::io::stdout().is_terminal(),
            std::io::stderr().is_terminal(),
            no_color,
        )
    }
}

/// Fixes the modes for the rest of the process (the first call wins).
pub fn init(output: Output) {
    let _ = OUTPUT.set(output);
}

/// The modes in force: those given to `init`, else what this process's streams call for.
pub fn current() -> Output {
    *OUTPUT.get_or_init(|| Output::detect(ColorChoice::Auto, false))
}

/// Writes bytes to stdout as its mode lets them through. False when stdout is gone (a closed
/// pipe): the caller stops quietly.
pub fn write_stdout(bytes: &[u8]) -> bool {
    write_stdout_as_is(&sanitize::apply(bytes, current().stdout))
}

/// Writes bytes that were made safe already (with `current().stdout`), as they are.
pub fn write_stdout_as_is(bytes: &[u8]) -> bool {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush()).is_ok()
}

/// Writes text to stderr as its mode lets it through.
pub fn write_stderr(text: &str) {
    let bytes = sanitize::apply(text.as_bytes(), current().stderr);
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(&bytes).and_then(|()| err.flush());
}

/// Asks a yes/no question on stderr (stdout stays the command's output); only `y` or `yes`
/// is a yes, and no answer (end of input) is a no.
pub fn ask(question: &str) -> bool {
    write_stderr(question);
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok()
        && matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// `println!` for command output.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        let mut line = format!($($arg)*);
        line.push('\n');
        $crate::output::write_stdout(line.as_bytes());
    }};
}

/// `eprintln!` for notes and errors.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {{
        let mut line = format!($($arg)*);
        line.push('\n');
        $crate::output::write_stderr(&line);
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_gets_the_bytes_and_a_terminal_inert_text() {
        let o = Output::choose(ColorChoice::Auto, false, false, true, false);
        assert_eq!(o.stdout, Mode::Raw);
        assert_eq!(o.stderr, Mode::Terminal { color: true });
    }

    #[test]
    fn raw_is_for_stdout_only() {
        let o = Output::choose(ColorChoice::Auto, true, true, true, false);
        assert_eq!(o.stdout, Mode::Raw);
        assert_eq!(o.stderr, Mode::Terminal { color: true });
    }

    #[test]
    fn no_color_turns_auto_off_but_not_always() {
        let auto = Output::choose(ColorChoice::Auto, false, true, true, true);
        assert_eq!(auto.stdout, Mode::Terminal { color: false });
        let always = Output::choose(ColorChoice::Always, false, true, true, true);
        assert_eq!(always.stdout, Mode::Terminal { color: true });
        let never = Output::choose(ColorChoice::Never, false, true, true, false);
        assert_eq!(never.stdout, Mode::Terminal { color: false });
    }
}
