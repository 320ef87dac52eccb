//! A certificate authority made for one run and a server certificate it signs, as PEM files: what
//! the deployment suite's nginx and the e2e suite's tool vendor serve https with, and what the
//! clients (and the toolbridge server, with `--trust-ca`) trust instead of a public CA.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, SanType,
};

use crate::Error;

/// The run's CA and the server certificate it signed, written to a folder.
pub struct TestTls {
    /// The CA's certificate: what the clients trust.
    pub ca_pem: String,
    /// Where the CA's certificate is written (`ca.pem`).
    pub ca_file: PathBuf,
    /// The server's certificate followed by the CA's (`fullchain.pem`).
    pub chain_file: PathBuf,
    /// The server's private key (`privkey.pem`).
    pub key_file: PathBuf,
    /// The server's certificate, DER, for a TLS server made in the test itself.
    pub cert_der: Vec<u8>,
    /// The server's private key, PKCS #8 DER.
    pub key_der: Vec<u8>,
    /// The folder the three files are in.
    pub dir: PathBuf,
}

impl TestTls {
    /// A CA named `label`, valid for a day around now, and a certificate it signed for the DNS
    /// `names` (wildcards allowed) and the IP `addresses`, written to `dir` as `ca.pem`,
    /// `fullchain.pem` and `privkey.pem`.
    ///
    /// # Errors
    ///
    /// A certificate that cannot be made, or a file that cannot be written.
    pub fn make(
        dir: &Path,
        label: &str,
        names: &[String],
        addresses: &[IpAddr],
    ) -> Result<Self, Error> {
        let failed = |what: &str, error: rcgen::Error| Error::failed(format!("{what}: {error}"));
        fs_err::create_dir_all(dir)?;
        let now = time::OffsetDateTime::now_utc();
        let validity = |params: &mut CertificateParams| {
            params.not_before = now - time::Duration::days(1);
            params.not_after = now + time::Duration::days(2);
        };
        let ca_key = KeyPair::generate().map_err(|e| failed("the CA's key", e))?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())
            .map_err(|e| failed("the CA's parameters", e))?;
        ca_params
            .distinguished_name
            .push(DnType::CommonName, format!("toolbridge {label} CA"));
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        validity(&mut ca_params);
        let ca = ca_params
            .self_signed(&ca_key)
            .map_err(|e| failed("the CA's certificate", e))?;

        let key = KeyPair::generate().map_err(|e| failed("the server's key", e))?;
        let mut params = CertificateParams::new(names.to_vec())
            .map_err(|e| failed("the server certificate's names", e))?;
        params
            .subject_alt_names
            .extend(addresses.iter().map(|address| SanType::IpAddress(*address)));
        let common_name = names
            .first()
            .cloned()
            .or_else(|| addresses.first().map(ToString::to_string))
            .unwrap_or_else(|| label.to_owned());
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        validity(&mut params);
        let cert = params
            .signed_by(&key, &ca, &ca_key)
            .map_err(|e| failed("the server's certificate", e))?;

        let ca_pem = ca.pem();
        let ca_file = dir.join("ca.pem");
        let chain_file = dir.join("fullchain.pem");
        let key_file = dir.join("privkey.pem");
        fs_err::write(&ca_file, &ca_pem)?;
        fs_err::write(&chain_file, format!("{}{}", cert.pem(), ca_pem))?;
        fs_err::write(&key_file, key.serialize_pem())?;
        Ok(Self {
            ca_pem,
            ca_file,
            chain_file,
            key_file,
            cert_der: cert.der().to_vec(),
            key_der: key.serialize_der(),
            dir: dir.to_owned(),
        })
    }
}
