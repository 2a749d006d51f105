//! The `hostile-strings` fault: what a hostile workload, node or cloud could put in the free-text
//! fields clients show — escape sequences that retitle a terminal or write its clipboard (OSC 0,
//! OSC 52), CSI that clears it, C1 controls, bidirectional overrides, backspaces and carriage
//! returns, and text long enough to overflow a line (a termination message, up to the 4 KiB the
//! kubelet keeps). Poisoning is idempotent: a field that carries it already is left alone, so an
//! object rewritten with the fault on does not grow, and a change that changes nothing is still
//! no write.

use serde_json::Value;

/// What is put before every free-text value.
pub const HOSTILE: &str = "\u{1b}]0;pwned title\u{7}\u{1b}]52;c;cm0gLXJmIH4vKgo=\u{7}\u{1b}[2J\u{1b}[H\u{9b}31m\u{9d}0;c1 title\u{9c}\u{202e}gnp.exe\u{2066}\u{8}\u{8}\r";

/// The kubelet's limit on a termination message.
const TERMINATION_MESSAGE_MAX: usize = 4096;

/// A free-text value, poisoned (once).
pub fn poison(text: &str) -> String {
    if text.starts_with(HOSTILE) {
        return text.to_string();
    }
    format!("{HOSTILE}{text}")
}

/// A termination message, poisoned and as long as the kubelet lets it be.
pub fn poison_long(text: &str) -> String {
    let mut out = poison(text);
    let filler = " \u{1b}[5m\u{202d}long\u{7}";
    while out.len() + filler.len() <= TERMINATION_MESSAGE_MAX {
        out.push_str(filler);
    }
    out
}

/// Poisons the string at `path` inside `v`, when there is one.
pub fn poison_at(v: &mut Value, path: &[&str], long: bool) {
    let mut at = v;
    for key in path {
        match at.get_mut(*key) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Some(text) = at.as_str().filter(|t| !t.starts_with(HOSTILE)) {
        *at = Value::String(if long {
            poison_long(text)
        } else {
            poison(text)
        });
    }
}

/// Poisons `path` in every element of the array at `array`.
pub fn poison_each(v: &mut Value, array: &[&str], path: &[&str], long: bool) {
    let mut at = v;
    for key in array {
        match at.get_mut(*key) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Some(items) = at.as_array_mut() {
        for item in items {
            poison_at(item, path, long);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisoning_twice_is_poisoning_once() {
        let once = poison("Back-off pulling image");
        assert_eq!(poison(&once), once);
        let long = poison_long("Error");
        assert!(long.len() <= TERMINATION_MESSAGE_MAX && long.len() > 4000);
        assert_eq!(poison_long(&long), long);
    }

    #[test]
    fn fields_in_arrays_are_poisoned_in_place() {
        let mut pod = serde_json::json!({"status": {"conditions": [
            {"type": "PodScheduled", "message": "0/3 nodes are available"},
            {"type": "Ready"}
        ]}});
        poison_each(&mut pod, &["status", "conditions"], &["message"], false);
        let first = pod["status"]["conditions"][0]["message"].as_str().unwrap();
        assert!(first.starts_with(HOSTILE) && first.ends_with("available"));
        assert!(pod["status"]["conditions"][1].get("message").is_none());
    }
}
