//! What the server's own https requests trust (webhook deliveries, and the requests it makes for
//! tools, [`crate::fetch`]): the web's public roots built into the server, and the certificates
//! `--trust-ca FILE` adds beside them, such as a company's own CA or a test's.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use reqwest::{Certificate, ClientBuilder};

/// Root certificates trusted in addition to the built-in ones; none by default.
#[derive(Clone, Default)]
pub struct TrustedRoots(Arc<Vec<Certificate>>);

impl TrustedRoots {
    /// The certificates of a PEM file (one or more `-----BEGIN CERTIFICATE-----` blocks).
    ///
    /// # Errors
    ///
    /// What is wrong, naming the file: it cannot be read, or holds no certificate that reads.
    pub fn from_pem_file(path: &Path) -> Result<Self, String> {
        let pem = std::fs::read(path)
            .map_err(|error| format!("--trust-ca {}: cannot read it: {error}", path.display()))?;
        Self::from_pem(&pem).map_err(|problem| format!("--trust-ca {}: {problem}", path.display()))
    }

    /// The certificates of PEM text.
    ///
    /// # Errors
    ///
    /// What is wrong: no certificate, or one that does not read.
    pub fn from_pem(pem: &[u8]) -> Result<Self, String> {
        let certificates = Certificate::from_pem_bundle(pem)
            .map_err(|error| format!("the PEM does not read as certificates: {error}"))?;
        if certificates.is_empty() {
            return Err(
                "holds no certificate: give a PEM file with -----BEGIN CERTIFICATE----- blocks"
                    .to_owned(),
            );
        }
        Ok(Self(Arc::new(certificates)))
    }

    /// How many certificates are added.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none are added.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `builder`, trusting these certificates as well as the built-in roots.
    pub fn apply(&self, builder: ClientBuilder) -> ClientBuilder {
        self.0.iter().fold(builder, |builder, certificate| {
            builder.add_root_certificate(certificate.clone())
        })
    }
}

impl fmt::Debug for TrustedRoots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TrustedRoots({} added)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_certificates_is_refused_with_its_name() {
        let refused = TrustedRoots::from_pem(b"not a certificate").err();
        assert!(
            refused
                .as_deref()
                .is_some_and(|r| r.contains("no certificate")),
            "{refused:?}"
        );
        let missing = TrustedRoots::from_pem_file(Path::new("/no/such/ca.pem")).err();
        assert!(
            missing
                .as_deref()
                .is_some_and(|m| m.starts_with("--trust-ca /no/such/ca.pem: cannot read it")),
            "{missing:?}"
        );
    }
}
