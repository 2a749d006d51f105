//! Who may connect, and who the server is. Keys are compared by their key data, never by comment
//! or options (sshd's `from=`, `command=`, `restrict` mean nothing here, which is why Gantry reads
//! a file of its own, not `~/.ssh/authorized_keys`). The files are read again at every login and
//! every second, and compared by content (not by modification time, which an editor or a copy
//! with `cp -p` may leave as it was): adding a teammate needs no restart, and a key taken out
//! ends its open sessions (`serve::revoke`). The host key is made once, kept 0600, and reused,
//! so `known_hosts` stays valid across restarts.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use russh::keys::ssh_key::{AuthorizedKeys, LineEnding, private::Ed25519Keypair};
use russh::keys::{HashAlg, PrivateKey, PublicKey};

/// What a connecting key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Watches; every change is refused by the viewer's read-only gate.
    Viewer,
    /// May change things, through the same gate, each with its confirmations.
    Operator,
}

/// A file of public keys in `authorized_keys` format, read again whenever it is asked.
pub struct KeyFile {
    path: PathBuf,
    cache: Mutex<Cached>,
}

#[derive(Default)]
struct Cached {
    /// The file's bytes as last read (None: no file).
    text: Option<Vec<u8>>,
    keys: Vec<Listed>,
}

/// A key of the file, with the comment of its line (`alice@ops`): how its holder is named.
#[derive(Debug, Clone)]
pub struct Listed {
    pub key: PublicKey,
    pub comment: String,
}

impl KeyFile {
    /// Reads the file now, so a mistake in it stops the server before it listens. A missing
    /// file is an empty list (nobody gets in until a key is added).
    pub fn open(path: &Path) -> Result<KeyFile, String> {
        let file = KeyFile {
            path: path.to_path_buf(),
            cache: Mutex::new(Cached::default()),
        };
        file.refresh()?;
        Ok(file)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many keys the file holds now.
    pub fn len(&self) -> usize {
        let _ = self.refresh();
        self.lock().keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `key` is listed (by key data), after reading the file again.
    pub fn contains(&self, key: &PublicKey) -> bool {
        self.find(key).is_some()
    }

    /// The line listing `key` (by key data), after reading the file again. A file that became
    /// unreadable or malformed keeps its last good keys (and says so in the log).
    pub fn find(&self, key: &PublicKey) -> Option<Listed> {
        if let Err(e) = self.refresh() {
            tracing::warn!("{e}; keeping the keys read before");
        }
        self.listed(key)
    }

    /// The line listing `key` as the file was last read.
    pub fn listed(&self, key: &PublicKey) -> Option<Listed> {
        self.lock()
            .keys
            .iter()
            .find(|k| k.key.key_data() == key.key_data())
            .cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cached> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads the file again; whether its keys changed. A file whose bytes are the same is not
    /// parsed again.
    pub fn refresh(&self) -> Result<bool, String> {
        let text = match std::fs::read(&self.path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("{}: {e}", self.path.display())),
        };
        if self.lock().text == text {
            return Ok(false);
        }
        let keys = match &text {
            Some(bytes) => {
                let utf8 = std::str::from_utf8(bytes)
                    .map_err(|e| format!("{}: not text ({e})", self.path.display()))?;
                parse_listed(utf8).map_err(|e| format!("{}: {e}", self.path.display()))?
            }
            None => Vec::new(),
        };
        let mut cache = self.lock();
        cache.text = text;
        cache.keys = keys;
        Ok(true)
    }
}

/// The keys of an `authorized_keys` text, with their comments.
pub fn parse_listed(text: &str) -> Result<Vec<Listed>, String> {
    let mut keys = Vec::new();
    for (i, entry) in AuthorizedKeys::new(text).enumerate() {
        match entry {
            Ok(entry) => keys.push(Listed {
                key: entry.public_key().clone(),
                comment: crate::sanitize::one_line(&String::from_utf8_lossy(
                    entry.public_key().comment().as_bytes(),
                )),
            }),
            Err(e) => {
                return Err(format!(
                    "entry {} is not an OpenSSH public key ({e}): one `ssh-ed25519 AAAA… comment` per line",
                    i + 1
                ));
            }
        }
    }
    Ok(keys)
}

/// The keys of an `authorized_keys` text; a line that is not a key is an error naming it.
pub fn parse(text: &str) -> Result<Vec<PublicKey>, String> {
    Ok(parse_listed(text)?.into_iter().map(|l| l.key).collect())
}

/// `SHA256:…`, as `ssh-keygen -lf` prints it.
pub fn fingerprint(key: &PublicKey) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

/// The host key at `path`, made (Ed25519, 0600) when there is none yet.
pub fn host_key(path: &Path) -> Result<PrivateKey, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => PrivateKey::from_openssh(text.as_bytes()).map_err(|e| {
            format!(
                "{}: not an OpenSSH private key ({e}); move it away and a new one is made",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let seed: [u8; 32] = rand::random();
            let key = PrivateKey::from(Ed25519Keypair::from_seed(&seed));
            let text = key
                .to_openssh(LineEnding::LF)
                .map_err(|e| format!("encoding the host key: {e}"))?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            crate::private_file::write_private(path, text.as_bytes())
                .map_err(|e| format!("{}: {e}", path.display()))?;
            tracing::info!(path = %path.display(), "made a new host key");
            Ok(key)
        }
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    const ALICE: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPoZZjfFGh6lBk8ugvvPHxvthZZsT9e89H9IDftbzIlS alice@laptop";

    #[test]
    fn keys_match_by_key_data_whatever_the_comment_or_options() {
        let listed = parse(&format!("# team\n\nrestrict,from=\"10.0.0.1\" {ALICE}\n")).unwrap();
        let offered = parse(&ALICE.replace("alice@laptop", "someone else")).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].key_data(), offered[0].key_data());
    }

    #[test]
    fn a_line_that_is_not_a_key_is_named() {
        let e = parse(&format!("{ALICE}\nnot a key\n")).unwrap_err();
        assert!(e.contains("entry 2"), "{e}");
    }

    #[test]
    fn a_key_taken_out_is_seen_even_when_the_file_keeps_its_modification_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("authorized_keys");
        std::fs::write(&path, ALICE).unwrap();
        let when = std::fs::metadata(&path).unwrap().modified().unwrap();
        let file = KeyFile::open(&path).unwrap();
        let alice = parse(ALICE).unwrap().remove(0);
        assert_eq!(file.find(&alice).unwrap().comment, "alice@laptop");
        std::fs::write(&path, "# nobody\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
        assert!(file.refresh().unwrap());
        assert!(!file.contains(&alice));
        assert!(!file.refresh().unwrap(), "the same bytes are not news");
    }

    #[test]
    fn the_file_is_read_again_when_it_changes_and_a_missing_one_lets_nobody_in() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("authorized_keys");
        let file = KeyFile::open(&path).unwrap();
        let alice = parse(ALICE).unwrap().remove(0);
        assert!(!file.contains(&alice));
        std::fs::write(&path, ALICE).unwrap();
        assert!(file.contains(&alice));
        std::fs::remove_file(&path).unwrap();
        assert!(!file.contains(&alice));
    }

    #[test]
    fn the_host_key_is_made_once_kept_private_and_read_back_the_same() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve/host_key");
        let made = host_key(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = host_key(&path).unwrap();
        assert_eq!(made.public_key(), again.public_key());
    }
}
