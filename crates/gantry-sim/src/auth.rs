//! The bearer token every simulated API accepts, and its rotation under `token-expiry`.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use rand::Rng;
use rand::distr::Alphanumeric;

/// Holds the one token in force. Anything else, including a rotated-out token, is refused.
#[derive(Debug)]
pub struct TokenAuthority {
    current: RwLock<String>,
    file: Option<PathBuf>,
}

impl TokenAuthority {
    /// A new authority with a fresh token; when `file` is set the token is kept there (mode 0600).
    pub fn new(file: Option<PathBuf>) -> std::io::Result<Arc<Self>> {
        let authority = Arc::new(Self {
            current: RwLock::new(String::new()),
            file,
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
        Ok(())
    }

    /// Whether an `Authorization` header value carries the current token.
    pub fn accepts(&self, authorization: Option<&str>) -> bool {
        let Some(value) = authorization else {
            return false;
        };
        let Some(token) = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
        else {
            return false;
        };
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        constant_time_eq(token.trim().as_bytes(), current.as_bytes())
    }
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
}
