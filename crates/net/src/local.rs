//! Every party of a mesh in this process, over real mutual TLS on loopback: for benchmarks,
//! examples and tests that need the TLS code path without separate processes.

use crate::certs::{free_loopback_addresses, generate_pki};
use crate::netem::{LinkParams, Relay};
use crate::{Error, Identity, MeshOptions, Result, Roster, TlsMesh};

/// Connects `n` parties of a fresh PKI (a new CA and party keys, made in memory) over mutual TLS
/// on free loopback ports, each with `opts`. With `netem`, every party's listener gets a
/// link-emulator [`Relay`] in front of it, so every link runs through one relay; keep the returned
/// relays alive as long as the meshes.
///
/// # Example
///
/// ```
/// use coterie_net::{Mesh, MeshOptions, local::tls_group};
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let (meshes, _relays) = tls_group(2, MeshOptions::default(), None).await.unwrap();
/// let mut tasks = Vec::new();
/// for mut m in meshes {
///     tasks.push(tokio::spawn(async move {
///         let all: Vec<u8> = m.exchange_all(&(m.id() as u8)).await?;
///         m.close().await?;
///         Ok::<_, coterie_net::Error>(all)
///     }));
/// }
/// for t in tasks {
///     assert_eq!(t.await.unwrap().unwrap(), vec![0, 1]);
/// }
/// # });
/// ```
pub async fn tls_group(
    n: usize,
    opts: MeshOptions,
    netem: Option<LinkParams>,
) -> Result<(Vec<TlsMesh>, Vec<Relay>)> {
    let pki = generate_pki(n)?;
    let listen = free_loopback_addresses(n)?;
    let mut relays = Vec::new();
    let addresses = match netem {
        None => listen.clone(),
        Some(p) => {
            let mut a = Vec::with_capacity(n);
            for l in &listen {
                let r = Relay::start("127.0.0.1:0", l, p)
                    .map_err(|e| Error::Config(format!("link emulator for {l}: {e}")))?;
                a.push(r.local_addr().to_string());
                relays.push(r);
            }
            a
        }
    };
    let ca = Identity::from_pem(&pki.ca.cert_pem, &pki.ca.key_pem)?
        .chain
        .swap_remove(0);
    let roster = Roster {
        addresses,
        listen,
        certs: vec![None; n],
        ca: Some(ca),
        keys: vec![None; n],
        roles: Vec::new(),
    };
    let mut hs = Vec::with_capacity(n);
    for (i, party) in pki.parties.iter().enumerate() {
        let (r, o) = (roster.clone(), opts.clone());
        let id = Identity::from_pem(&party.cert_pem, &party.key_pem)?;
        hs.push(tokio::spawn(
            async move { TlsMesh::connect(&r, i, id, o).await },
        ));
    }
    let mut out = Vec::with_capacity(n);
    for h in hs {
        out.push(
            h.await
                .map_err(|e| Error::Protocol(format!("connect task: {e}")))??,
        );
    }
    Ok((out, relays))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mesh;
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn group_with_and_without_relays_exchanges() {
        let link = LinkParams::new(Duration::from_millis(2), 0.0);
        for netem in [None, Some(link)] {
            let (g, relays) = tls_group(3, MeshOptions::default(), netem).await.unwrap();
            assert_eq!(relays.len(), if netem.is_some() { 3 } else { 0 });
            let mut hs = Vec::new();
            for mut m in g {
                hs.push(tokio::spawn(async move {
                    let v: Vec<u64> = m.exchange_all(&(m.id() as u64 * 7)).await.unwrap();
                    m.close().await.unwrap();
                    v
                }));
            }
            for h in hs {
                assert_eq!(h.await.unwrap(), vec![0, 7, 14]);
            }
        }
    }
}
