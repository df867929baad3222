//! Certificates: a party's own [`Identity`], the TLS provider, and the certificate policy of a
//! roster ([`PartyVerifier`]), used on both the dialing and the accepting side.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    CertificateError, DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme,
};

use crate::config::{Roster, load_cert_chain, load_key, parse_party_name, party_name};
use crate::{Error, PartyId, Result};

/// A party's own certificate chain and private key.
#[derive(Debug)]
pub struct Identity {
    /// Certificate chain, the party's certificate first.
    pub chain: Vec<CertificateDer<'static>>,
    /// Private key.
    pub key: PrivateKeyDer<'static>,
}

impl Clone for Identity {
    fn clone(&self) -> Self {
        Self {
            chain: self.chain.clone(),
            key: self.key.clone_key(),
        }
    }
}

impl Identity {
    /// Reads a PEM certificate (chain) and a PEM private key.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Self> {
        Ok(Self {
            chain: load_cert_chain(cert)?,
            key: load_key(key)?,
        })
    }

    /// Parses PEM text.
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Self> {
        use rustls::pki_types::pem::PemObject;
        let chain = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| Error::Tls(format!("certificate PEM: {e}")))?;
        if chain.is_empty() {
            return Err(Error::Tls("no certificate in PEM".into()));
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
            .map_err(|e| Error::Tls(format!("key PEM: {e}")))?;
        Ok(Self { chain, key })
    }
}

/// The ring provider with AES-128-GCM preferred: it is the fastest suite on the x86 machines this
/// runs on (AES-NI/VAES), and it gives the 128-bit security level of every other primitive in
/// coterie. AES-256-GCM and ChaCha20-Poly1305 stay available for peers that insist.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    use rustls::crypto::ring::cipher_suite as cs;
    let mut p = rustls::crypto::ring::default_provider();
    p.cipher_suites = vec![
        cs::TLS13_AES_128_GCM_SHA256,
        cs::TLS13_AES_256_GCM_SHA384,
        cs::TLS13_CHACHA20_POLY1305_SHA256,
    ];
    Arc::new(p)
}

pub(crate) fn tls_err(e: impl std::fmt::Display) -> Error {
    Error::Tls(e.to_string())
}

/// Certificate policy of a roster, used on both the client and the server side.
#[derive(Debug)]
pub(crate) struct PartyVerifier {
    pinned: Vec<Option<CertificateDer<'static>>>,
    ca_server: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    ca_client: Option<Arc<dyn ClientCertVerifier>>,
    algs: WebPkiSupportedAlgorithms,
}

impl PartyVerifier {
    pub(crate) fn new(roster: &Roster, provider: &Arc<CryptoProvider>) -> Result<Self> {
        let (ca_server, ca_client) = match &roster.ca {
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                roots.add(ca.clone()).map_err(tls_err)?;
                let roots = Arc::new(roots);
                let s = rustls::client::WebPkiServerVerifier::builder_with_provider(
                    roots.clone(),
                    provider.clone(),
                )
                .build()
                .map_err(tls_err)?;
                let c = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    roots,
                    provider.clone(),
                )
                .build()
                .map_err(tls_err)?;
                (Some(s), Some(c))
            }
            None => (None, None),
        };
        Ok(Self {
            pinned: roster.certs.clone(),
            ca_server,
            ca_client,
            algs: provider.signature_verification_algorithms,
        })
    }

    /// Whether `cert` (already chain-verified by the handshake) may act as party `id`.
    pub(crate) fn authorizes(&self, id: PartyId, cert: &CertificateDer<'_>) -> bool {
        match self.pinned.get(id) {
            Some(Some(p)) => p.as_ref() == cert.as_ref(),
            Some(None) => {
                self.ca_client.is_some()
                    && ServerName::try_from(party_name(id)).is_ok_and(|name| {
                        webpki::EndEntityCert::try_from(cert)
                            .and_then(|ee| ee.verify_is_valid_for_subject_name(&name))
                            .is_ok()
                    })
            }
            None => false,
        }
    }
}

fn refused() -> rustls::Error {
    rustls::Error::InvalidCertificate(CertificateError::ApplicationVerificationFailure)
}

impl ServerCertVerifier for PartyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let ServerName::DnsName(dns) = server_name else {
            return Err(refused());
        };
        let id = parse_party_name(dns.as_ref()).ok_or_else(refused)?;
        match self.pinned.get(id) {
            Some(Some(p)) if p.as_ref() == end_entity.as_ref() => {
                Ok(ServerCertVerified::assertion())
            }
            Some(None) => match &self.ca_server {
                Some(v) => v.verify_server_cert(end_entity, intermediates, server_name, ocsp, now),
                None => Err(refused()),
            },
            _ => Err(refused()),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

impl ClientCertVerifier for PartyVerifier {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> std::result::Result<ClientCertVerified, rustls::Error> {
        if self
            .pinned
            .iter()
            .flatten()
            .any(|p| p.as_ref() == end_entity.as_ref())
        {
            return Ok(ClientCertVerified::assertion());
        }
        match &self.ca_client {
            Some(v) => v.verify_client_cert(end_entity, intermediates, now),
            None => Err(refused()),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}
