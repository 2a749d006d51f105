//! A process container's command line, environment and working directory, from its spec as the
//! kubelet and the runtime would make them, with the one departure process pods need: a path
//! under a volume's mount path is that volume's directory on this machine.
//!
//! The command: the mapped EXECUTABLE stands for the image's ENTRYPOINT, and in Kubernetes
//! `command` replaces the ENTRYPOINT and `args` replaces the CMD. So with no `command` the
//! EXECUTABLE runs with `args`; with a `command` whose first word is the EXECUTABLE's own name
//! (`python3` for an image mapped to `/usr/bin/python3`, by file name), the EXECUTABLE runs with
//! the rest of `command` then `args`; any other first word is a program of its own: a path is
//! run as it is (rewritten if under a mount path), a bare name is looked up on the container's
//! PATH, and a name not found there fails the start as runc does. `$(VAR)` references in
//! `command`, `args` and `env` values are expanded as the kubelet expands them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::kube::process::run_images::search_path;

/// The PATH a container gets unless its spec sets one: Docker's and containerd's default for
/// an image that sets none, after the directory of the EXECUTABLE, as an image puts its
/// interpreter on its own PATH.
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// A container's mount paths and the directories on this machine that stand for them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mounts(Vec<(String, PathBuf)>);

impl Mounts {
    pub fn new(mut mounts: Vec<(String, PathBuf)>) -> Self {
        for (path, _) in &mut mounts {
            while path.len() > 1 && path.ends_with('/') {
                path.pop();
            }
        }
        // The longest mount path that holds a value decides (a mount inside another).
        mounts.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        Self(mounts)
    }

    /// `value` with a leading mount path replaced by its directory: a value that is a mount
    /// path or begins with one then `/`, or whose part after its first `=` does
    /// (`--config=/etc/app/config.yaml`). Everything else is left as it is.
    pub fn rewrite(&self, value: &str) -> String {
        if let Some(rewritten) = self.rewrite_path(value) {
            return rewritten;
        }
        if let Some((flag, path)) = value.split_once('=')
            && let Some(rewritten) = self.rewrite_path(path)
        {
            return format!("{flag}={rewritten}");
        }
        value.to_string()
    }

    fn rewrite_path(&self, value: &str) -> Option<String> {
        self.0.iter().find_map(|(mount, dir)| {
            let rest = value.strip_prefix(mount.as_str())?;
            (rest.is_empty() || rest.starts_with('/') || mount == "/")
                .then(|| format!("{}{rest}", dir.display()))
        })
    }
}

/// The kubelet's `$(VAR)` expansion (`third_party/forked/golang/expansion`): a defined
/// variable's value; `$$` is a literal `$`; an undefined or unterminated reference is kept.
pub fn expand(input: &str, lookup: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(body) = after.strip_prefix('(')
            && let Some(end) = body.find(')')
        {
            let name = &body[..end];
            match lookup(name) {
                Some(value) => out.push_str(&value),
                None => {
                    out.push_str("$(");
                    out.push_str(name);
                    out.push(')');
                }
            }
            rest = &body[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// An environment in the order it was built, a later value of a name replacing the earlier.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Environment {
    vars: Vec<(String, String)>,
    at: HashMap<String, usize>,
}

impl Environment {
    pub fn set(&mut self, name: &str, value: String) {
        match self.at.get(name) {
            Some(&i) => self.vars[i].1 = value,
            None => {
                self.at.insert(name.to_string(), self.vars.len());
                self.vars.push((name.to_string(), value));
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.at.get(name).map(|&i| self.vars[i].1.as_str())
    }

    /// `value` with its `$(VAR)` references to this environment expanded.
    pub fn expand(&self, value: &str) -> String {
        expand(value, |name| self.get(name).map(str::to_string))
    }

    pub fn into_vars(self) -> Vec<(String, String)> {
        self.vars
    }
}

/// The program to run and its arguments, or why it cannot start (runc's words).
pub fn command_line(
    container: &Value,
    executable: &Path,
    env: &Environment,
    mounts: &Mounts,
) -> Result<(PathBuf, Vec<String>), String> {
    let words = |key: &str| -> Vec<String> {
        container[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| mounts.rewrite(&env.expand(w.as_str().unwrap_or_default())))
            .collect()
    };
    let command = words("command");
    let args = words("args");
    let Some((first, rest)) = command.split_first() else {
        return Ok((executable.to_path_buf(), args));
    };
    let rest: Vec<String> = rest.iter().cloned().chain(args).collect();
    let entrypoint = executable.file_name();
    if entrypoint.is_some() && Path::new(first).file_name() == entrypoint {
        return Ok((executable.to_path_buf(), rest));
    }
    if first.contains('/') {
        return Ok((PathBuf::from(first), rest));
    }
    let path = env.get("PATH").unwrap_or(DEFAULT_PATH);
    match search_path(Path::new(first), std::ffi::OsStr::new(path)) {
        Some(program) => Ok((program, rest)),
        None => Err(format!(
            "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: exec: \"{first}\": executable file not found in $PATH: unknown"
        )),
    }
}

/// The working directory: `workingDir` (rewritten if under a mount path), else `default`.
pub fn working_dir(container: &Value, mounts: &Mounts, default: &Path) -> PathBuf {
    match container["workingDir"].as_str().filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(mounts.rewrite(dir)),
        None => default.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn env_of(pairs: &[(&str, &str)]) -> Environment {
        let mut env = Environment::default();
        for (k, v) in pairs {
            env.set(k, v.to_string());
        }
        env
    }

    #[test]
    fn references_expand_as_the_kubelet_expands_them() {
        let env = env_of(&[("PORT", "8080"), ("HOST", "127.4.5.6")]);
        assert_eq!(
            env.expand("--bind=$(HOST):$(PORT)"),
            "--bind=127.4.5.6:8080"
        );
        assert_eq!(env.expand("$(MISSING) stays"), "$(MISSING) stays");
        assert_eq!(env.expand("$$(PORT) is escaped"), "$(PORT) is escaped");
        assert_eq!(
            env.expand("a $ alone, $(unterminated"),
            "a $ alone, $(unterminated"
        );
        assert_eq!(env.expand("$$$(PORT)"), "$8080");
    }

    #[test]
    fn a_value_under_a_mount_path_is_rewritten_to_its_volume_directory() {
        let mounts = Mounts::new(vec![
            ("/etc/app/".into(), PathBuf::from("/tmp/pod/volumes/config")),
            (
                "/etc/app/secret".into(),
                PathBuf::from("/tmp/pod/volumes/creds"),
            ),
        ]);
        assert_eq!(mounts.rewrite("/etc/app"), "/tmp/pod/volumes/config");
        assert_eq!(
            mounts.rewrite("/etc/app/a.yaml"),
            "/tmp/pod/volumes/config/a.yaml"
        );
        assert_eq!(
            mounts.rewrite("/etc/app/secret/token"),
            "/tmp/pod/volumes/creds/token"
        );
        assert_eq!(
            mounts.rewrite("--config=/etc/app/a.yaml"),
            "--config=/tmp/pod/volumes/config/a.yaml"
        );
        assert_eq!(mounts.rewrite("/etc/application"), "/etc/application");
        assert_eq!(mounts.rewrite("relative/etc/app"), "relative/etc/app");
    }

    #[test]
    fn the_executable_stands_for_the_entrypoint_and_other_programs_come_from_path() {
        let python = Path::new("/opt/py/bin/python3");
        let env = env_of(&[("PATH", DEFAULT_PATH), ("PORT", "8080")]);
        let mounts = Mounts::new(vec![("/scripts".into(), PathBuf::from("/tmp/v/s"))]);
        let args_only = json!({"args": ["-m", "http.server", "$(PORT)"]});
        assert_eq!(
            command_line(&args_only, python, &env, &mounts).unwrap(),
            (
                python.to_path_buf(),
                vec!["-m".into(), "http.server".into(), "8080".into()]
            )
        );
        let named = json!({"command": ["python3", "-c"], "args": ["print(1)"]});
        assert_eq!(
            command_line(&named, python, &env, &mounts).unwrap(),
            (python.to_path_buf(), vec!["-c".into(), "print(1)".into()])
        );
        let by_path = json!({"command": ["/usr/local/bin/python3", "x.py"]});
        assert_eq!(
            command_line(&by_path, python, &env, &mounts).unwrap().0,
            python
        );
        let script = json!({"command": ["/scripts/run.sh", "/scripts/in"]});
        assert_eq!(
            command_line(&script, python, &env, &mounts).unwrap(),
            (PathBuf::from("/tmp/v/s/run.sh"), vec!["/tmp/v/s/in".into()])
        );
        let shell = json!({"command": ["sh", "-c", "echo hi"]});
        let (program, _) = command_line(&shell, python, &env, &mounts).unwrap();
        assert!(
            program.ends_with("sh") && program.is_absolute(),
            "{program:?}"
        );
        let missing = json!({"command": ["no-such-program-anywhere"]});
        let err = command_line(&missing, python, &env, &mounts).unwrap_err();
        assert!(
            err.contains("exec: \"no-such-program-anywhere\": executable file not found in $PATH"),
            "{err}"
        );
    }

    #[test]
    fn a_later_value_of_a_name_replaces_the_earlier_in_place() {
        let mut env = env_of(&[("A", "1"), ("B", "2")]);
        env.set("A", "3".into());
        assert_eq!(
            env.into_vars(),
            vec![("A".into(), "3".into()), ("B".into(), "2".into())]
        );
    }
}
