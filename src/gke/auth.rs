//! The OAuth access token for the Container API and the cluster's API server: Application Default
//! Credentials (refreshed before expiry by google-cloud-auth), or a file holding a token (re-read
//! when it changes or after the token was refused). The token is never logged nor written.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use google_cloud_auth::credentials::{
    Builder, CacheableResource, Credentials, CredentialsProvider, EntityTag,
};
use google_cloud_auth::errors::CredentialsError;
use http::header::AUTHORIZATION;
use http::{Extensions, HeaderMap, HeaderValue};

use super::{CLOUD_PLATFORM_SCOPE, GkeError};

/// Where tokens come from. Cheap to clone; clones share the cache.
#[derive(Clone)]
pub struct Auth {
    inner: Arc<Source>,
}

enum Source {
    File(TokenFile),
    Adc(RwLock<Credentials>),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.inner {
            Source::File(t) => f.debug_struct("Auth").field("file", &t.path).finish(),
            Source::Adc(_) => f
                .debug_struct("Auth")
                .field("source", &"application default credentials")
                .finish(),
        }
    }
}

impl Auth {
    /// `--access-token-file` when given, else Application Default Credentials.
    pub fn from_flags(access_token_file: Option<&Path>) -> Result<Self, GkeError> {
        match access_token_file {
            Some(path) => Self::token_file(path),
            None => Self::application_default(),
        }
    }

    /// A token kept in a file; it must be readable and hold a token now.
    pub fn token_file(path: &Path) -> Result<Self, GkeError> {
        let file = TokenFile {
            path: path.to_path_buf(),
            cache: Mutex::new(None),
        };
        file.read()?;
        Ok(Self {
            inner: Arc::new(Source::File(file)),
        })
    }

    /// Application Default Credentials with the cloud-platform scope.
    pub fn application_default() -> Result<Self, GkeError> {
        Ok(Self {
            inner: Arc::new(Source::Adc(RwLock::new(adc()?))),
        })
    }

    /// The `Authorization` header value (`Bearer …`), marked sensitive so it is never printed.
    pub async fn authorization(&self) -> Result<HeaderValue, GkeError> {
        let headers = self.headers().await?;
        headers
            .get(AUTHORIZATION)
            .cloned()
            .ok_or_else(|| GkeError::Credentials {
                message: "the credentials gave no access token".into(),
            })
    }

    /// Every header the credentials add to a request (the token, and for ADC the quota project).
    pub async fn headers(&self) -> Result<HeaderMap, GkeError> {
        match &*self.inner {
            Source::File(file) => {
                let token = file.read()?;
                let mut value =
                    HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                        GkeError::Credentials {
                            message: format!(
                                "{} does not hold a token (it has characters a token cannot have)",
                                file.path.display()
                            ),
                        }
                    })?;
                value.set_sensitive(true);
                Ok(HeaderMap::from_iter([(AUTHORIZATION, value)]))
            }
            Source::Adc(credentials) => {
                let credentials = credentials
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                match credentials.headers(Extensions::new()).await {
                    Ok(CacheableResource::New { mut data, .. }) => {
                        if let Some(v) = data.get_mut(AUTHORIZATION) {
                            v.set_sensitive(true);
                        }
                        Ok(data)
                    }
                    Ok(CacheableResource::NotModified) => Err(GkeError::Credentials {
                        message: "the credentials returned no headers".into(),
                    }),
                    Err(e) => Err(GkeError::Credentials {
                        message: adc_failure(&e),
                    }),
                }
            }
        }
    }

    /// Fetches a token now, so that missing or broken credentials are a one-line error before
    /// anything else happens (ADC may have to ask the metadata server: bounded by `patience`).
    pub async fn verify(&self, patience: std::time::Duration) -> Result<(), GkeError> {
        match tokio::time::timeout(patience, self.authorization()).await {
            Ok(result) => result.map(|_| ()),
            Err(_) => Err(GkeError::Credentials {
                message: format!(
                    "no access token after {}s (no Application Default Credentials file, and no metadata server answered)",
                    patience.as_secs()
                ),
            }),
        }
    }

    /// The token was refused: read the file again, or fetch a new token, on the next request.
    pub fn invalidate(&self) {
        match &*self.inner {
            Source::File(file) => {
                *file.cache.lock().unwrap_or_else(|p| p.into_inner()) = None;
            }
            Source::Adc(credentials) => match adc() {
                Ok(fresh) => *credentials.write().unwrap_or_else(|p| p.into_inner()) = fresh,
                Err(e) => tracing::warn!(error = %e, "could not reload the credentials"),
            },
        }
    }

    /// These credentials in the form the Google Cloud clients take.
    pub fn credentials(&self) -> Credentials {
        Credentials::from(Provider(self.clone()))
    }
}

/// Why Application Default Credentials gave no token, in Gantry's words: the client library's
/// own text is written for retrying callers ("…might succeed… but future attempts may succeed").
fn adc_failure(e: &dyn std::fmt::Display) -> String {
    let env_file = std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS").filter(|v| !v.is_empty());
    let well_known = std::env::var_os("CLOUDSDK_CONFIG")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".config/gcloud"))
        })
        .map(|d| d.join("application_default_credentials.json"));
    match (env_file, well_known) {
        (Some(file), _) => format!(
            "GOOGLE_APPLICATION_CREDENTIALS ({}) gave no token: {}",
            std::path::Path::new(&file).display(),
            first_sentence(e)
        ),
        (None, Some(file)) if file.is_file() => {
            format!("{} gave no token: {}", file.display(), first_sentence(e))
        }
        _ => "no Application Default Credentials file, and no metadata server answered".into(),
    }
}

/// The first sentence of an error's text, without the library's advice on retrying.
fn first_sentence(e: &dyn std::fmt::Display) -> String {
    let text = e.to_string();
    match text.find(". ") {
        Some(i) => text[..i].to_string(),
        None => text.trim_end_matches('.').to_string(),
    }
}

fn adc() -> Result<Credentials, GkeError> {
    Builder::default()
        .with_scopes([CLOUD_PLATFORM_SCOPE])
        .build()
        .map_err(|e| GkeError::Credentials {
            message: format!("Application Default Credentials: {e}"),
        })
}

/// A token file: re-read when its modification time or size changes, or after invalidation.
struct TokenFile {
    path: PathBuf,
    cache: Mutex<Option<(Option<SystemTime>, u64, String)>>,
}

impl TokenFile {
    fn read(&self) -> Result<String, GkeError> {
        let fail = |why: String| GkeError::Credentials {
            message: format!("--access-token-file {}: {why}", self.path.display()),
        };
        let meta = std::fs::metadata(&self.path).map_err(|e| fail(e.to_string()))?;
        let stamp = (meta.modified().ok(), meta.len());
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((modified, len, token)) = &*cache
            && (*modified, *len) == stamp
        {
            return Ok(token.clone());
        }
        let text = std::fs::read_to_string(&self.path).map_err(|e| fail(e.to_string()))?;
        let token = text.trim().to_string();
        if token.is_empty() || token.contains(char::is_whitespace) {
            return Err(fail("the file does not hold one access token".into()));
        }
        *cache = Some((stamp.0, stamp.1, token.clone()));
        Ok(token)
    }
}

/// [`Auth`] as a google-cloud-auth provider, for `ClusterManager::builder().with_credentials`.
#[derive(Debug)]
struct Provider(Auth);

impl CredentialsProvider for Provider {
    async fn headers(
        &self,
        _: Extensions,
    ) -> Result<CacheableResource<HeaderMap>, CredentialsError> {
        match self.0.headers().await {
            Ok(data) => Ok(CacheableResource::New {
                entity_tag: EntityTag::new(),
                data,
            }),
            Err(e) => Err(CredentialsError::from_msg(false, e.to_string())),
        }
    }

    async fn universe_domain(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[tokio::test]
    async fn token_file_is_reread_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "first\n").unwrap();
        let auth = Auth::token_file(&path).unwrap();
        let value = auth.authorization().await.unwrap();
        assert!(value.is_sensitive());
        assert_eq!(value.to_str().unwrap(), "Bearer first");
        std::fs::write(&path, "second-and-longer").unwrap();
        assert_eq!(
            auth.authorization().await.unwrap().to_str().unwrap(),
            "Bearer second-and-longer"
        );
        std::fs::write(&path, "").unwrap();
        assert!(auth.authorization().await.is_err());
        assert!(format!("{auth:?}").contains("token"));
    }

    #[test]
    fn missing_token_file_is_bad_input() {
        let e = Auth::token_file(Path::new("/nonexistent/token")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string()
                .contains("gcloud auth application-default login")
        );
    }
}
