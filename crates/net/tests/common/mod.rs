//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::time::Duration;

use coterie_net::certs::{Pki, free_loopback_addresses, generate_pki};
use coterie_net::{Identity, MeshOptions, Roster, TlsMesh};

pub fn roster(pki: &Pki, pin: bool) -> Roster {
    let n = pki.parties.len();
    let addrs = free_loopback_addresses(n).unwrap();
    let cert = |pem: &str| Identity::from_pem(pem, &pki.ca.key_pem).map(|i| i.chain[0].clone());
    Roster {
        addresses: addrs.clone(),
        listen: addrs,
        certs: pki
            .parties
            .iter()
            .map(|p| {
                if pin {
                    Some(cert(&p.cert_pem).unwrap())
                } else {
                    None
                }
            })
            .collect(),
        ca: Some(cert(&pki.ca.cert_pem).unwrap()),
        keys: vec![None; n],
        roles: Vec::new(),
    }
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
