//! `--run-code`: a run-image rule no image names. A code attempt — a container that runs Python
//! over code an init container of its pod unpacks into its working directory — runs as a local
//! process of this machine's own `python3`, whatever its image says (a base image is not run:
//! there is no container runtime). The interpreter is found once, when the simulator starts, on
//! its own PATH, and said with its version; the kubelet's side is
//! `controllers::kubelet::process::code`.

use std::path::{Path, PathBuf};

use super::run_images::{RunImageError, search_path};

/// The machine's Python: where it is and what it says its version is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    pub path: PathBuf,
    /// `Python 3.11.2`.
    pub version: String,
}

impl Interpreter {
    /// `python3` on the simulator's PATH, as the interpreter itself names its executable: a
    /// version manager's shim would want its own variables, which a pod's environment lacks.
    pub fn find() -> Result<Self, RunImageError> {
        let refused = |why: String| RunImageError::Executable {
            given: "--run-code".into(),
            why,
        };
        let path = std::env::var_os("PATH").unwrap_or_default();
        let found = search_path(Path::new("python3"), &path).ok_or_else(|| {
            refused(
                "code attempts run on this machine's python3, and there is none on PATH: install Python 3, or drop --run-code".into(),
            )
        })?;
        let out = std::process::Command::new(&found)
            .args([
                "-c",
                "import sys; print(sys.executable); print(sys.version.split()[0])",
            ])
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| refused(format!("{} could not be run: {e}", found.display())))?;
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = said.lines().map(str::trim);
        let (executable, version) = (lines.next().unwrap_or_default(), lines.next());
        let Some(version) = version.filter(|_| out.status.success()) else {
            return Err(refused(format!(
                "{} did not say what it is: give a working python3 on PATH",
                found.display()
            )));
        };
        let path = match executable {
            "" => found,
            own => PathBuf::from(own),
        };
        Ok(Self {
            path,
            version: format!("Python {version}"),
        })
    }

    /// `/usr/bin/python3 (Python 3.11.2)`.
    pub fn said(&self) -> String {
        format!("{} ({})", self.path.display(), self.version)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_interpreter_is_named_by_its_own_executable_and_version() {
        let Ok(python) = Interpreter::find() else {
            assert!(
                std::env::var("GANTRY_REQUIRE_PYTHON3").as_deref() != Ok("1"),
                "GANTRY_REQUIRE_PYTHON3=1 but python3 is not on PATH"
            );
            eprintln!("skipping: python3 is not on PATH");
            return;
        };
        assert!(python.path.is_absolute(), "{python:?}");
        assert!(python.version.starts_with("Python 3."), "{python:?}");
        assert!(python.said().contains(&python.version));
    }
}
