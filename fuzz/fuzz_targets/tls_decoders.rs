//! Fuzzes the decoders the server runs on bytes it does not control: client certificates
//! (DER, after a handshake) and PEM files. Checks that nothing panics and that what a decoded
//! certificate reports stays within what it was given.
#![no_main]

use libfuzzer_sys::fuzz_target;
use natrium_x509::{pem, PeerCert};

fuzz_target!(|data: &[u8]| {
    if let Ok(cert) = PeerCert::parse(data) {
        assert_eq!(cert.der, data);
        assert!(cert.raw_subject.len() <= data.len());
        let _ = (cert.subject.len(), cert.subject_rdn.len());
    }
    for block in pem::blocks(data) {
        assert!(block.der.len() <= data.len());
        if let Ok(cert) = PeerCert::parse(&block.der) {
            assert!(!cert.der.is_empty());
        }
    }
});
