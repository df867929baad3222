//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::time::Duration;

use coterie_net::certs::{Pki, generate_pki};
use coterie_net::local::loopback_roster;
use coterie_net::{Identity, MeshOptions, Roster, TlsMesh};

pub fn roster(pki: &Pki, pin: bool) -> Roster {
    loopback_roster(pki, pin).unwrap()
}

pub fn identity(pki: &Pki, i: usize) -> Identity {
    Identity::from_pem(&pki.parties[i].cert_pem, &pki.parties[i].key_pem).unwrap()
}

pub fn opts(timeout_s: u64) -> MeshOptions {
    MeshOptions {
        timeout: Duration::from_secs(timeout_s),
        connect_deadline: Duration::from_secs(20),
        ..MeshOptions::default()
    }
}

/// Connects all `n` parties of a fresh PKI over loopback TLS, in this process.
pub async fn tls_group(n: usize, pin: bool, o: MeshOptions) -> Vec<TlsMesh> {
    let pki = generate_pki(n).unwrap();
    let r = roster(&pki, pin);
    let mut hs = Vec::new();
    for i in 0..n {
        let r = r.clone();
        let id = identity(&pki, i);
        let o = o.clone();
        hs.push(tokio::spawn(
            async move { TlsMesh::connect(&r, i, id, o).await },
        ));
    }
    let mut out = Vec::new();
    for h in hs {
        out.push(h.await.unwrap().unwrap());
    }
    out
}
