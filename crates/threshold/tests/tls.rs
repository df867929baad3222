//! Four-party decryption with the paper's parameters over mutual TLS on loopback, with
//! **insecure** dealer preprocessing: distributed key generation, public key, encryption of
//! known messages, gate preprocessing and batched decryption (seed 000 §15).

use std::time::Duration;

use coterie_net::certs::generate_pki;
use coterie_net::local::loopback_roster;
use coterie_net::{Identity, Mesh, MeshOptions, TlsMesh};
use coterie_spdz::{Counts, Engine, InsecureDealer, Z2k};
use coterie_threshold::gates::{GatePool, prep_bundles};
use coterie_threshold::keys::{KeyDistribution, PublicKey, SharedKey};
use coterie_threshold::online::decrypt;
use coterie_threshold::pipelined::decrypt_pipelined;
use coterie_threshold::{LweCiphertext, Params};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_party_decryption_over_loopback_tls() {
    let n = 4;
    let p = Params::paper();
    let lt = p.lt().unwrap();
    let (samples, eta, decs) = (
        PublicKey::secure_samples(&p),
        PublicKey::secure_noise_bits(&p).unwrap(),
        4usize,
    );
    let pki = generate_pki(n).unwrap();
    let r = loopback_roster(&pki, false).unwrap();
    let opts = MeshOptions {
        timeout: Duration::from_secs(60),
        connect_deadline: Duration::from_secs(20),
        ..MeshOptions::default()
    };
    let mut rng = rand::rng();
    let dealer = InsecureDealer::insecure_new(Z2k::spdz2k_64(), n, &mut rng).unwrap();
    let preps = dealer.deal(
        Counts {
            triples: 2 * decs * lt.mults_per_bundle(),
            bits: 2 * decs * lt.bits_per_bundle() + p.n + eta as usize * samples,
            randoms: 8 * decs + samples,
            masks_per_party: 0,
        },
        &mut rng,
    );
    let mut hs = Vec::new();
    for (i, prep) in preps.into_iter().enumerate() {
        let r = r.clone();
        let id = Identity::from_pem(&pki.parties[i].cert_pem, &pki.parties[i].key_pem).unwrap();
        let opts = opts.clone();
        hs.push(tokio::spawn(async move {
            let mut mesh = TlsMesh::connect(&r, i, id, opts).await?;
            let mut eng = Engine::new(prep);
            let key = SharedKey::generate(&mut eng, p.n, KeyDistribution::Binary)?;
            let pk =
                PublicKey::generate(&mut eng, &mut mesh, &p, &key, [3u8; 32], samples, eta).await?;
            let cts: Vec<LweCiphertext> = {
                let mut rng = coterie_math::prg::Xof::new(&[5u8; 32], b"tls-test", 0);
                (0..decs as u64)
                    .map(|j| pk.encrypt(j % 2, 1, &mut rng))
                    .collect::<Result<_, _>>()?
            };
            // the binary format round-trips what a client would send
            let cts: Vec<LweCiphertext> = cts
                .iter()
                .map(|c| LweCiphertext::from_bytes(&c.to_bytes()))
                .collect::<Result<_, _>>()?;
            let (b, _) = prep_bundles(&mut eng, &mut mesh, &lt, 2 * decs, 0).await?;
            let mut pool = GatePool::new(lt);
            pool.push(b)?;
            let strict = decrypt(&mut eng, &mut mesh, &p, &key, &cts, &mut pool).await?;
            let pipelined =
                decrypt_pipelined(&mut eng, &mut mesh, &p, &key, &cts, &mut pool, 1).await?;
            assert_eq!(pool.len(), 0);
            mesh.close().await.ok();
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>((strict, pipelined))
        }));
    }
    for h in hs {
        let (strict, pipelined) = h.await.unwrap().unwrap();
        assert_eq!(strict, vec![0, 1, 0, 1]);
        assert_eq!(pipelined, vec![0, 1, 0, 1]);
    }
}
