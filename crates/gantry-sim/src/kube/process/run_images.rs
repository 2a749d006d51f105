//! `--run-image PATTERN=EXECUTABLE`: which images the kubelet runs as local processes, and the
//! executable that stands for each one's entrypoint. The simulator knows no image names of its
//! own; whoever starts it passes the map.

use std::path::{Path, PathBuf};
use std::str::FromStr;

/// One `PATTERN=EXECUTABLE`: an image reference matching PATTERN (`*` is any characters, every
/// other character itself) runs as EXECUTABLE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunImage {
    pub pattern: String,
    pub executable: PathBuf,
}

/// What is wrong with a `--run-image`: its form (as the command line parses it), or its
/// executable (naming the mapping, when the simulator starts).
#[derive(Debug, thiserror::Error)]
pub enum RunImageError {
    #[error("{0}")]
    Form(String),
    #[error("--run-image {given}: {why}")]
    Executable { given: String, why: String },
}

impl FromStr for RunImage {
    type Err = RunImageError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |why: &str| RunImageError::Form(why.to_string());
        let Some((pattern, executable)) = s.split_once('=') else {
            return Err(err(
                "give PATTERN=EXECUTABLE, e.g. 'python:*=python3' or '*/trainer:*=./train.sh'",
            ));
        };
        let (pattern, executable) = (pattern.trim(), executable.trim());
        if pattern.is_empty() {
            return Err(err(
                "the image pattern is empty: give one such as 'python:*' ('*' is any characters)",
            ));
        }
        if executable.is_empty() {
            return Err(err(
                "the executable is empty: give a program on PATH or a path to one",
            ));
        }
        Ok(Self {
            pattern: pattern.to_string(),
            executable: PathBuf::from(executable),
        })
    }
}

impl RunImage {
    pub fn matches(&self, image: &str) -> bool {
        glob_matches(&self.pattern, image)
    }

    /// The same mapping with its executable found now, on the simulator's own PATH for a bare
    /// name and against the current directory for a relative path, so the pods run what was
    /// meant whatever their own PATH and working directory.
    pub fn resolved(&self) -> Result<Self, RunImageError> {
        let given = format!("{}={}", self.pattern, self.executable.display());
        let err = |why: String| RunImageError::Executable {
            given: given.clone(),
            why,
        };
        let is_bare_name = self.executable.components().count() == 1
            && !self.executable.to_string_lossy().contains('/');
        let found = if is_bare_name {
            let path = std::env::var_os("PATH").unwrap_or_default();
            search_path(&self.executable, &path).ok_or_else(|| {
                err(format!(
                    "{} is not on PATH: give a path to the executable, or install it",
                    self.executable.display()
                ))
            })?
        } else {
            std::path::absolute(&self.executable).map_err(|e| err(e.to_string()))?
        };
        if !is_executable_file(&found) {
            return Err(err(format!(
                "{} is not an executable file: give a program the pods can run",
                found.display()
            )));
        }
        Ok(Self {
            pattern: self.pattern.clone(),
            executable: found,
        })
    }
}

/// Every `--run-image`, in the order given: the first whose pattern matches decides. And
/// `--run-code`'s rule, which no image names: the interpreter code attempts run on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunImages {
    images: Vec<RunImage>,
    code: Option<super::run_code::Interpreter>,
}

impl RunImages {
    pub fn new(images: Vec<RunImage>) -> Self {
        Self { images, code: None }
    }

    /// The map with every executable found (`RunImage::resolved`).
    pub fn resolved(&self) -> Result<Self, RunImageError> {
        let images = self
            .images
            .iter()
            .map(RunImage::resolved)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            images,
            code: self.code.clone(),
        })
    }

    /// With `--run-code`: code attempts run on `interpreter`.
    pub fn with_code(self, interpreter: super::run_code::Interpreter) -> Self {
        Self {
            code: Some(interpreter),
            ..self
        }
    }

    /// The interpreter code attempts run on, with `--run-code`.
    pub fn code(&self) -> Option<&super::run_code::Interpreter> {
        self.code.as_ref()
    }

    /// The executable standing for `image`'s entrypoint, when it runs as a process.
    pub fn executable_for(&self, image: &str) -> Option<&Path> {
        self.images
            .iter()
            .find(|m| m.matches(image))
            .map(|m| m.executable.as_path())
    }

    pub fn is_empty(&self) -> bool {
        self.images.is_empty() && self.code.is_none()
    }

    pub fn iter(&self) -> impl Iterator<Item = &RunImage> {
        self.images.iter()
    }
}

/// `*` matches any run of characters (`/` and `:` included); every other character itself.
fn glob_matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*` at all: the whole text must be the pattern.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// `name` found in the directories of a PATH value, as a shell finds a command.
pub fn search_path(name: &Path, path: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable_file(candidate))
}

fn is_executable_file(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_star_matches_any_characters_and_nothing_else_is_special() {
        assert!(glob_matches("python:*", "python:3.12-slim"));
        assert!(glob_matches("*/trainer:*", "gcr.io/p/trainer:v1"));
        assert!(glob_matches("*", "anything/at:all"));
        assert!(glob_matches("gcr.io/*/web*", "gcr.io/p/q/web-server"));
        assert!(!glob_matches("python:*", "docker.io/library/python:3"));
        assert!(!glob_matches("python", "python:3"));
        assert!(!glob_matches("a*b*c", "a-c-b"));
        assert!(glob_matches("a*a", "aa"));
        assert!(!glob_matches("a*a", "a"));
        assert!(!glob_matches("python.*", "python3x"));
    }

    #[test]
    fn the_first_pattern_that_matches_decides() {
        let images = RunImages::new(vec![
            "python:3.12=/usr/bin/python3.12".parse().unwrap(),
            "python:*=/usr/bin/python3".parse().unwrap(),
        ]);
        assert_eq!(
            images.executable_for("python:3.12"),
            Some(Path::new("/usr/bin/python3.12"))
        );
        assert_eq!(
            images.executable_for("python:3.11"),
            Some(Path::new("/usr/bin/python3"))
        );
        assert_eq!(images.executable_for("nginx"), None);
    }

    #[test]
    fn a_mapping_without_both_sides_says_what_to_give() {
        let err = "python3".parse::<RunImage>().unwrap_err().to_string();
        assert!(err.contains("PATTERN=EXECUTABLE"), "{err}");
        let err = "=python3".parse::<RunImage>().unwrap_err().to_string();
        assert!(err.contains("pattern is empty"), "{err}");
        let err = "python:*=".parse::<RunImage>().unwrap_err().to_string();
        assert!(err.contains("executable is empty"), "{err}");
    }

    #[test]
    fn a_bare_executable_is_found_on_path_once_and_a_missing_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("server");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        assert_eq!(
            search_path(Path::new("server"), dir.path().as_os_str()),
            Some(exe.clone())
        );
        let given: RunImage = format!("x={}", exe.display()).parse().unwrap();
        assert_eq!(given.resolved().unwrap().executable, exe);
        let missing: RunImage = "x=surely-no-such-program-here".parse().unwrap();
        let err = missing.resolved().unwrap_err().to_string();
        assert!(err.contains("is not on PATH"), "{err}");
        let not_executable: RunImage = format!("x={}", dir.path().display()).parse().unwrap();
        let err = not_executable.resolved().unwrap_err().to_string();
        assert!(err.contains("not an executable file"), "{err}");
    }
}
