//! The simulated cloud's certificate authority, and the server certificates of cluster API servers.

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

#[derive(Debug, thiserror::Error)]
#[error("could not make the simulator's certificates: {0}")]
pub struct TlsError(String);

impl From<rcgen::Error> for TlsError {
    fn from(e: rcgen::Error) -> Self {
        Self(e.to_string())
    }
}
impl From<rustls::Error> for TlsError {
    fn from(e: rustls::Error) -> Self {
        Self(e.to_string())
    }
}

/// A CA generated at start; it signs every simulated cluster's API certificate.
pub struct CertificateAuthority {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl std::fmt::Debug for CertificateAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertificateAuthority")
            .finish_non_exhaustive()
    }
}

impl CertificateAuthority {
    pub fn generate() -> Result<Self, TlsError> {
        let mut params = CertificateParams::default();
        let mut name = DistinguishedName::new();
        name.push(DnType::CommonName, "gantry simulated cluster CA");
        params.distinguished_name = name;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate()?;
        let cert = params.self_signed(&key)?;
        Ok(Self {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        })
    }

    /// The CA certificate, PEM-encoded.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// A rustls server configuration for 127.0.0.1, `localhost` and `kubernetes.default`.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, TlsError> {
        let mut params = CertificateParams::new(vec![
            "localhost".to_string(),
            "kubernetes".to_string(),
            "kubernetes.default".to_string(),
            "kubernetes.default.svc".to_string(),
        ])?;
        params
            .subject_alt_names
            .push(SanType::IpAddress(std::net::IpAddr::from([127, 0, 0, 1])));
        let mut name = DistinguishedName::new();
        name.push(DnType::CommonName, "kube-apiserver");
        params.distinguished_name = name;
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &self.issuer)?;
        let chain = vec![CertificateDer::from(cert.der().to_vec())];
        let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, private)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}
