//! The bearer token every simulated API accepts, and its rotation under `token-expiry`; and
//! the tokens of Google service accounts, as a pod's metadata server hands them out — each
//! its own, never the simulator's own token (what a pod is given is never the machine's
//! credential). The GKE API knows whose such a token is, and decides what that account may do.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use rand::Rng;
use rand::distr::Alphanumeric;

/// Holds the one token in force. Anything else, including a rotated-out token, is refused.
#[derive(Debug)]
pub struct TokenAuthority {
    current: RwLock<String>,
    file: Option<PathBuf>,
    /// Each Google service account's token, by its email (issued when first asked for,
    /// rotated with the simulator's own).
    accounts: RwLock<HashMap<String, String>>,
}

impl TokenAuthority {
    /// A new authority with a fresh token; when `file` is set the token is kept there (mode 0600).
    pub fn new(file: Option<PathBuf>) -> std::io::Result<Arc<Self>> {
        let authority = Arc::new(Self {
            current: RwLock::new(String::new()),
            file,
            accounts: RwLock::new(HashMap::new()),
        });
        authority.rotate()?;
        Ok(authority)
    }

    pub fn current(&self) -> String {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Issues a new token and refuses the old one from now on.
    pub fn rotate(&self) -> std::io::Result<()> {
        let token = new_token();
        if let Some(path) = &self.file {
            super::state_files::write_private(path, token.as_bytes())?;
        }
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = token;
        self.accounts
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        Ok(())
    }

    /// The token of Google service account `email` now (a metadata server's answer).
    pub fn token_of(&self, email: &str) -> String {
        let mut accounts = self.accounts.write().unwrap_or_else(|p| p.into_inner());
        accounts
            .entry(email.to_string())
            .or_insert_with(new_token)
            .clone()
    }

    /// Whose service account token an `Authorization` header carries, if it carries one in
    /// force.
    pub fn account_of(&self, authorization: Option<&str>) -> Option<String> {
        let token = bearer(authorization?)?;
        let accounts = self.accounts.read().unwrap_or_else(|p| p.into_inner());
        accounts
            .iter()
            .find(|(_, t)| constant_time_eq(token.as_bytes(), t.as_bytes()))
            .map(|(email, _)| email.clone())
    }

    /// Whether an `Authorization` header value carries the current token.
    pub fn accepts(&self, authorization: Option<&str>) -> bool {
        let Some(token) = authorization.and_then(bearer) else {
            return false;
        };
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        constant_time_eq(token.as_bytes(), current.as_bytes())
    }
}

fn bearer(value: &str) -> Option<&str> {
    value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .map(str::trim)
}

fn new_token() -> String {
    let random: String = rand::rng()
        .sample_iter(&Alphanumeric)
        .take(48)
        .map(char::from)
        .collect();
    format!("ya29.sim-{random}")
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_the_current_token() {
        let auth = TokenAuthority::new(None).unwrap();
        let old = auth.current();
        assert!(auth.accepts(Some(&format!("Bearer {old}"))));
        assert!(!auth.accepts(Some("Bearer nope")));
        assert!(!auth.accepts(None));
        auth.rotate().unwrap();
        assert!(!auth.accepts(Some(&format!("Bearer {old}"))));
        assert!(auth.accepts(Some(&format!("Bearer {}", auth.current()))));
    }

    #[test]
    fn an_account_s_token_is_its_own_never_the_simulator_s_and_goes_with_a_rotation() {
        let auth = TokenAuthority::new(None).unwrap();
        let email = "w@p.iam.gserviceaccount.com";
        let token = auth.token_of(email);
        assert_ne!(token, auth.current());
        assert_eq!(auth.token_of(email), token, "the same until a rotation");
        let header = format!("Bearer {token}");
        assert!(!auth.accepts(Some(&header)), "not the simulator's own");
        assert_eq!(auth.account_of(Some(&header)).as_deref(), Some(email));
        auth.rotate().unwrap();
        assert_eq!(auth.account_of(Some(&header)), None);
        assert_ne!(auth.token_of(email), token);
    }
}
