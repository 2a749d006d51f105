//! A simulated container runs no program, but one that runs a Python script out of files its
//! init containers unpacked (`init::Unpacked`) can be held to them: when the script is not among
//! them, the container ends as Python ends when it cannot open its script — its message, exit
//! code 2 — instead of running the simulated workload. A script anywhere else (in the image) is
//! not the kubelet's to know, and runs as before.

use std::path::Path;

use serde_json::Value;

use super::init::Unpacked;

/// Whether a command's program is a Python interpreter: `python`, `python3`, `python3.12`, by
/// file name.
pub fn is_python(program: &str) -> bool {
    let Some(name) = Path::new(program).file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    match name.strip_prefix("python") {
        Some("") | Some("3") => true,
        Some(rest) => rest
            .strip_prefix("3.")
            .is_some_and(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit())),
        None => false,
    }
}

/// The script a Python command line runs, after the interpreter's own options: None when the
/// program is not Python, or runs no file (`-c`, `-m`, `-` or nothing).
pub fn script_of(words: &[String]) -> Option<&str> {
    let (program, args) = words.split_first()?;
    if !is_python(program) {
        return None;
    }
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--" => return args.next().map(String::as_str),
            "-" | "-c" | "-m" | "--help" | "--version" | "-h" | "-V" => return None,
            "-W" | "-X" | "--check-hash-based-pycs" => {
                args.next();
            }
            option if option.starts_with("--") => {}
            option if option.starts_with('-') => {
                // A cluster of one-letter options; `c`, `m`, `W` and `X` take the rest.
                let letters = &option[1..];
                if let Some(at) = letters.find(['c', 'm', 'W', 'X']) {
                    let taken = &letters[at + 1..];
                    match &letters[at..=at] {
                        "c" | "m" => return None,
                        _ if taken.is_empty() => {
                            args.next();
                        }
                        _ => {}
                    }
                }
            }
            script => return Some(script),
        }
    }
    None
}

/// What Python prints when `container`'s script is not among the files its pod's init
/// containers unpacked (`python3: can't open file '/workspace/train.py': [Errno 2] No such file
/// or directory`); None when it is there, or the kubelet cannot know.
pub fn cannot_open(container: &Value, unpacked: &Unpacked) -> Option<String> {
    let words: Vec<String> = ["command", "args"]
        .iter()
        .flat_map(|k| container[*k].as_array().into_iter().flatten())
        .filter_map(|w| w.as_str().map(str::to_string))
        .collect();
    // Without `command` the image's entrypoint runs: nothing the kubelet can read.
    container["command"].as_array().filter(|c| !c.is_empty())?;
    let script = script_of(&words)?;
    let path = if script.starts_with('/') {
        script.to_string()
    } else {
        let dir = container["workingDir"].as_str().filter(|d| !d.is_empty())?;
        format!(
            "{}/{}",
            dir.trim_end_matches('/'),
            script.trim_start_matches("./")
        )
    };
    match unpacked.holds(container, &path)? {
        true => None,
        false => Some(format!(
            "{}: can't open file '{path}': [Errno 2] No such file or directory",
            words[0]
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_script_is_read_past_the_interpreters_own_options() {
        assert_eq!(
            script_of(&words("python3 train.py --lr 3e-4")),
            Some("train.py")
        );
        assert_eq!(
            script_of(&words("python -u -W ignore train.py")),
            Some("train.py")
        );
        assert_eq!(
            script_of(&words("/usr/bin/python3.12 -uB x.py")),
            Some("x.py")
        );
        assert_eq!(
            script_of(&words("python3 -X dev -- -odd.py")),
            Some("-odd.py")
        );
        assert_eq!(
            script_of(&words("python3 -m torch.distributed.run t.py")),
            None
        );
        assert_eq!(script_of(&words("python3 -c print(1)")), None);
        assert_eq!(script_of(&words("python3")), None);
        assert_eq!(script_of(&words("torchrun train.py")), None);
        assert!(is_python("python3.11") && !is_python("python3.") && !is_python("pythonista"));
    }
}
