//! ServiceAccount tokens, issued and checked as kube-apiserver does for bound tokens
//! (`pkg/serviceaccount/claims.go`): a JWT signed with the cluster's own key (ES256, the
//! `--service-account-signing-key-file` of a cluster whose key is ECDSA) carrying `iss`, `aud`,
//! `sub`, `exp`, `nbf`, `iat`, `jti` and `kubernetes.io` {namespace, serviceaccount {name, uid},
//! pod?, node?}. A token is taken only while its signature, issuer, audience and times hold, its
//! ServiceAccount still exists with the uid it names, and so does the pod it is bound to; a
//! deleted ServiceAccount (or one recreated under the same name) ends every token it had. JWTs
//! rather than opaque strings: a program in a pod can read who it is from its token, as it can
//! on GKE, and nothing needs remembering per token.

use std::time::Duration;

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::cluster::{ClusterSpec, ClusterState};
use super::errors::ApiError;
use super::identity::UserInfo;
use super::meta;
use super::resources::Kind;
use crate::SimError;
use crate::tls::TlsError;

/// go-jose's `DefaultLeeway`, which the API server's validation keeps for `exp` and `nbf`.
const LEEWAY_SECONDS: u64 = 60;
/// A token bound to an object that is being deleted works this much longer
/// (`claims.go`: the pod or ServiceAccount may still need it to finish).
const DELETION_GRACE_SECONDS: i64 = 60;
pub const CREDENTIAL_ID: &str = "authentication.kubernetes.io/credential-id";
const POD_NAME: &str = "authentication.kubernetes.io/pod-name";
const POD_UID: &str = "authentication.kubernetes.io/pod-uid";
const NODE_NAME: &str = "authentication.kubernetes.io/node-name";
const NODE_UID: &str = "authentication.kubernetes.io/node-uid";

/// A pod a token is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodRef {
    pub name: String,
    pub uid: String,
}

impl PodRef {
    pub fn of(pod: &Value) -> Self {
        Self {
            name: meta::name(pod).into(),
            uid: meta::uid(pod).into(),
        }
    }
}

/// What else a token request may ask for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenOptions {
    /// Who the token is meant for (`aud`); empty means the API server itself.
    pub audiences: Vec<String>,
    /// The pod the token is bound to: it stops working once that pod is gone.
    pub bound_pod: Option<PodRef>,
}

/// A token and when it stops working.
#[derive(Clone, PartialEq, Eq)]
pub struct IssuedToken {
    pub token: String,
    pub expires_at: jiff::Timestamp,
}

impl std::fmt::Debug for IssuedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedToken")
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct ObjectRef {
    name: String,
    uid: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct KubernetesClaims {
    namespace: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    node: Option<ObjectRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pod: Option<ObjectRef>,
    serviceaccount: ObjectRef,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Claims {
    aud: Vec<String>,
    exp: i64,
    iat: i64,
    iss: String,
    jti: String,
    #[serde(rename = "kubernetes.io")]
    kubernetes: KubernetesClaims,
    nbf: i64,
    sub: String,
}

/// One cluster's signing key and the issuer and audience it signs for.
pub struct TokenIssuer {
    encoding: EncodingKey,
    decoding: DecodingKey,
    key_id: String,
    /// GKE's issuer URL, which is also the API server's audience.
    issuer: String,
}

impl std::fmt::Debug for TokenIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenIssuer")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl TokenIssuer {
    /// A fresh ECDSA P-256 key for the cluster `spec` names.
    pub fn new(spec: &ClusterSpec) -> Result<Self, SimError> {
        use base64::Engine;
        let key = rcgen::KeyPair::generate().map_err(TlsError::from)?;
        let digest = (jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER
            .key_utils
            .compute_digest)(
            &rcgen::PublicKeyData::subject_public_key_info(&key),
            jsonwebtoken::jwk::ThumbprintHash::SHA256,
        )
        .map_err(|e| SimError::Other(format!("could not make the token signing key: {e}")))?;
        Ok(Self {
            encoding: EncodingKey::from_ec_der(&key.serialize_der()),
            decoding: DecodingKey::from_ec_der(key.public_key_raw()),
            // `keyIDFromPublicKey`: the SHA-256 of the PKIX public key, base64url.
            key_id: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest),
            issuer: format!(
                "https://container.googleapis.com/v1/projects/{}/locations/{}/clusters/{}",
                spec.project, spec.location, spec.name
            ),
        })
    }

    /// The API server's own audience (`--api-audiences`), GKE's issuer URL.
    pub fn api_audience(&self) -> &str {
        &self.issuer
    }

    fn sign(&self, claims: &Claims) -> Result<String, ApiError> {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.key_id.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).map_err(|e| {
            ApiError::new(
                500,
                "InternalError",
                format!("failed to sign the token: {e}"),
            )
        })
    }

    /// The claims of a token this issuer signed, still in its time window, meant for one of
    /// `audiences`.
    fn verify(&self, token: &str, audiences: &[&str]) -> Option<Claims> {
        let mut validation = Validation::new(Algorithm::ES256);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(audiences);
        validation.set_required_spec_claims(&["exp", "nbf", "iss", "aud", "sub"]);
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation)
            .ok()
            .map(|data| data.claims)
    }
}

impl ClusterState {
    /// A token for the ServiceAccount `namespace/service_account`, working for `lifetime` (as
    /// the TokenRequest API and the kubelet's projected token volumes get them). 404 when the
    /// ServiceAccount, or the pod it is to be bound to, does not exist.
    pub fn issue_token(
        &self,
        namespace: &str,
        service_account: &str,
        lifetime: Duration,
        options: &TokenOptions,
    ) -> Result<IssuedToken, ApiError> {
        let Some(account) = self
            .store
            .get(Kind::ServiceAccount, namespace, service_account)
        else {
            return Err(ApiError::not_found(
                Kind::ServiceAccount.resource(),
                service_account,
            ));
        };
        let (pod, node) = match &options.bound_pod {
            None => (None, None),
            Some(bound) => {
                let pod = self
                    .store
                    .get(Kind::Pod, namespace, &bound.name)
                    .filter(|p| bound.uid.is_empty() || meta::uid(p) == bound.uid)
                    .ok_or_else(|| ApiError::not_found(Kind::Pod.resource(), &bound.name))?;
                let node = pod["spec"]["nodeName"]
                    .as_str()
                    .and_then(|n| self.store.get(Kind::Node, "", n))
                    .map(|n| ObjectRef {
                        name: meta::name(&n).into(),
                        uid: meta::uid(&n).into(),
                    });
                let pod = ObjectRef {
                    name: meta::name(&pod).into(),
                    uid: meta::uid(&pod).into(),
                };
                (Some(pod), node)
            }
        };
        let now = jiff::Timestamp::now().as_second();
        let lifetime = i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX / 2);
        let audiences = if options.audiences.is_empty() {
            vec![self.tokens.api_audience().to_string()]
        } else {
            options.audiences.clone()
        };
        let claims = Claims {
            aud: audiences,
            exp: now.saturating_add(lifetime),
            iat: now,
            iss: self.tokens.issuer.clone(),
            jti: meta::new_uid(),
            kubernetes: KubernetesClaims {
                namespace: namespace.into(),
                node,
                pod,
                serviceaccount: ObjectRef {
                    name: service_account.into(),
                    uid: meta::uid(&account).into(),
                },
            },
            nbf: now,
            sub: super::identity::service_account_username(namespace, service_account),
        };
        let token = self.tokens.sign(&claims)?;
        let expires_at = jiff::Timestamp::from_second(claims.exp)
            .map_err(|e| ApiError::bad_request(format!("spec.expirationSeconds: {e}")))?;
        Ok(IssuedToken { token, expires_at })
    }

    /// Who a ServiceAccount token speaks for, if it is one of this cluster's, is meant for one
    /// of `audiences` (none: the API server's own) and still works.
    pub fn authenticate_token(&self, token: &str, audiences: &[&str]) -> Option<UserInfo> {
        let own = [self.tokens.api_audience()];
        let audiences = if audiences.is_empty() {
            &own[..]
        } else {
            audiences
        };
        let claims = self.tokens.verify(token, audiences)?;
        let k = &claims.kubernetes;
        if claims.sub
            != super::identity::service_account_username(&k.namespace, &k.serviceaccount.name)
        {
            return None;
        }
        let account = self
            .store
            .get(Kind::ServiceAccount, &k.namespace, &k.serviceaccount.name)?;
        if meta::uid(&account) != k.serviceaccount.uid || deleted_too_long_ago(&account) {
            return None;
        }
        let mut user =
            UserInfo::service_account(&k.namespace, &k.serviceaccount.name, meta::uid(&account));
        user.extra
            .insert(CREDENTIAL_ID.into(), vec![format!("JTI={}", claims.jti)]);
        if let Some(bound) = &k.pod {
            let pod = self.store.get(Kind::Pod, &k.namespace, &bound.name)?;
            if meta::uid(&pod) != bound.uid || deleted_too_long_ago(&pod) {
                return None;
            }
            user.extra.insert(POD_NAME.into(), vec![bound.name.clone()]);
            user.extra.insert(POD_UID.into(), vec![bound.uid.clone()]);
        }
        if let Some(node) = &k.node {
            user.extra.insert(NODE_NAME.into(), vec![node.name.clone()]);
            user.extra.insert(NODE_UID.into(), vec![node.uid.clone()]);
        }
        Some(user)
    }

    /// `authenticate_token` for an `Authorization` header value.
    pub fn authenticate_bearer(&self, authorization: Option<&str>) -> Option<UserInfo> {
        let value = authorization?;
        let token = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))?;
        self.authenticate_token(token.trim(), &[])
    }
}

fn deleted_too_long_ago(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .is_some_and(|at| {
            jiff::Timestamp::now().as_second() - at.as_second() > DELETION_GRACE_SECONDS
        })
}

#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tests;
