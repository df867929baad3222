//! Loopback benchmark of the party runtime, with raw TCP measured in the same run.
//!
//! `cargo run --profile bench -p coterie-net --example net_bench -- [--quick] [--json FILE]`
//!
//! * round: median time of one all-to-all round (`exchange_all` of a u64) over TLS for 4, 8, 16
//!   parties (all parties as tasks in this process), against the median round trip of a raw TCP
//!   ping-pong (8 bytes, TCP_NODELAY) on the same runtime;
//! * bulk: throughput of 1 MiB messages from party 0 to party 1 over the TLS mesh and the
//!   in-memory mesh, against a raw TCP stream.

use std::time::{Duration, Instant};

use coterie_net::{Blob, InMemoryMesh, Mesh, MeshOptions, TlsMesh};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

async fn raw_tcp_pingpong(iters: usize) -> f64 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        s.set_nodelay(true).unwrap();
        let mut b = [0u8; 8];
        while s.read_exact(&mut b).await.is_ok() {
            if s.write_all(&b).await.is_err() {
                break;
            }
        }
    });
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.set_nodelay(true).unwrap();
    let mut b = [1u8; 8];
    let mut v = Vec::new();
    for i in 0..iters + 50 {
        let t = Instant::now();
        c.write_all(&b).await.unwrap();
        c.read_exact(&mut b).await.unwrap();
        if i >= 50 {
            v.push(t.elapsed().as_secs_f64());
        }
    }
    median(v)
}

/// Median all-to-all round of `n` tasks over a full mesh of plain TCP streams (TCP_NODELAY, no TLS,
/// no framing beyond a fixed 12-byte message): the floor that any mesh on this machine and runtime
/// pays for the same communication pattern.
#[allow(clippy::needless_range_loop)] // pairs (i, j) fill a symmetric table
async fn raw_tcp_rounds(n: usize, rounds: usize) -> f64 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let mut links: Vec<Vec<Option<TcpStream>>> =
        (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
    for i in 0..n {
        for j in i + 1..n {
            let c = TcpStream::connect(addr).await.unwrap();
            let (s, _) = l.accept().await.unwrap();
            c.set_nodelay(true).unwrap();
            s.set_nodelay(true).unwrap();
            links[i][j] = Some(c);
            links[j][i] = Some(s);
        }
    }
    let hs: Vec<_> = links
        .into_iter()
        .enumerate()
        .map(|(me, mut peers)| {
            tokio::spawn(async move {
                let mut v = Vec::with_capacity(rounds);
                for r in 0..rounds + 20 {
                    let t = Instant::now();
                    let mut msg = [0u8; 12];
                    msg[..8].copy_from_slice(&(r as u64).to_le_bytes());
                    for s in peers.iter_mut().flatten() {
                        s.write_all(&msg).await.unwrap();
                    }
                    for (j, s) in peers.iter_mut().enumerate() {
                        if let Some(s) = s {
                            let mut b = [0u8; 12];
                            s.read_exact(&mut b).await.unwrap();
                            assert_eq!(b, msg, "raw round from {j} to {me}");
                        }
                    }
                    if r >= 20 {
                        v.push(t.elapsed().as_secs_f64());
                    }
                }
                median(v)
            })
        })
        .collect();
    let mut first = None;
    for h in hs {
        let x = h.await.unwrap();
        first.get_or_insert(x);
    }
    first.unwrap_or(0.0)
}

async fn raw_tcp_bulk(total: usize) -> f64 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let rx = tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let mut got = 0;
        while got < total {
            let k = s.read(&mut buf).await.unwrap();
            if k == 0 {
                break;
            }
            got += k;
        }
        got
    });
    let mut c = TcpStream::connect(addr).await.unwrap();
    let block = vec![7u8; 1 << 20];
    let t = Instant::now();
    let mut sent = 0;
    while sent < total {
        c.write_all(&block).await.unwrap();
        sent += block.len();
    }
    let got = rx.await.unwrap();
    got as f64 / t.elapsed().as_secs_f64()
}

/// Throughput of a bare tokio-rustls stream (TLS 1.3, AES-128-GCM, ring provider, self-signed
/// certificate), 1 MiB writes, receiver reading into one reused buffer: the ceiling for any TLS
/// mesh on this machine, measured in the same run.
async fn bare_tls_bulk(total: usize) -> f64 {
    use std::sync::Arc;
    use tokio_rustls::rustls::{self, pki_types::PrivateKeyDer};
    let ck = rcgen::generate_simple_self_signed(vec!["bench.local".to_string()]).unwrap();
    let cert = ck.cert.der().clone();
    let key = PrivateKeyDer::try_from(ck.signing_key.serialize_der()).unwrap();
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites = vec![rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256];
    let provider = Arc::new(provider);
    let server = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).unwrap();
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let rx = tokio::spawn(async move {
        let (s, _) = l.accept().await.unwrap();
        let mut s = acceptor.accept(s).await.unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let mut got = 0;
        while got < total {
            let k = s.read(&mut buf).await.unwrap();
            if k == 0 {
                break;
            }
            got += k;
        }
        got
    });
    let tcp = TcpStream::connect(addr).await.unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
    let name = rustls::pki_types::ServerName::try_from("bench.local").unwrap();
    let mut c = connector.connect(name, tcp).await.unwrap();
    let block = vec![7u8; 1 << 20];
    let t = Instant::now();
    let mut sent = 0;
    while sent < total {
        c.write_all(&block).await.unwrap();
        sent += block.len();
    }
    c.flush().await.unwrap();
    let got = rx.await.unwrap();
    got as f64 / t.elapsed().as_secs_f64()
}

async fn tls_group(n: usize) -> Vec<TlsMesh> {
    tls_group_via(n, None).await.0
}

/// A TLS group whose links run through link-emulator relays (one in front of each party's
/// listener) when `netem` is given.
async fn tls_group_via(
    n: usize,
    netem: Option<coterie_net::netem::LinkParams>,
) -> (Vec<TlsMesh>, Vec<coterie_net::netem::Relay>) {
    let opts = MeshOptions {
        timeout: Duration::from_secs(60),
        max_frame: 256 << 20,
        ..MeshOptions::default()
    };
    coterie_net::local::tls_group(n, opts, netem).await.unwrap()
}

/// Median per-round time seen by party 0 over `rounds` rounds (after 20 warm-up rounds).
async fn rounds<M: Mesh + 'static>(meshes: Vec<M>, rounds: usize) -> f64 {
    let hs: Vec<_> = meshes
        .into_iter()
        .map(|mut m| {
            tokio::spawn(async move {
                let mut v = Vec::with_capacity(rounds);
                for r in 0..rounds + 20 {
                    let t = Instant::now();
                    let all: Vec<u64> = m.exchange_all(&(r as u64)).await.unwrap();
                    assert!(all.iter().all(|&x| x == r as u64));
                    if r >= 20 {
                        v.push(t.elapsed().as_secs_f64());
                    }
                }
                m.close().await.unwrap();
                median(v)
            })
        })
        .collect();
    let mut first = None;
    for h in hs {
        let x = h.await.unwrap();
        first.get_or_insert(x);
    }
    first.unwrap_or(0.0)
}

/// Throughput of `total` bytes in 1 MiB messages from party 0 to party 1: with `serde_blob`, as
/// serde [`Blob`] values (`send`/`recv`); otherwise through the byte-string calls
/// (`send_bytes`/`recv_bytes`), which skip the copies of serialization.
async fn bulk<M: Mesh + 'static>(meshes: Vec<M>, total: usize, serde_blob: bool) -> f64 {
    let msg = 1 << 20;
    let count = total / msg;
    let hs: Vec<_> = meshes
        .into_iter()
        .map(|mut m| {
            tokio::spawn(async move {
                let t = Instant::now();
                if m.id() == 0 {
                    let b = Blob(vec![9u8; msg]);
                    for _ in 0..count {
                        if serde_blob {
                            m.send(1, &b).await.unwrap();
                        } else {
                            m.send_bytes(1, 0, &b.0).await.unwrap();
                        }
                    }
                    let _: u8 = m.recv(1).await.unwrap();
                } else {
                    for _ in 0..count {
                        let len = if serde_blob {
                            m.recv::<Blob>(0).await.unwrap().0.len()
                        } else {
                            m.recv_bytes(0, 0).await.unwrap().len()
                        };
                        assert_eq!(len, msg);
                    }
                    m.send(0, &1u8).await.unwrap();
                }
                let secs = t.elapsed().as_secs_f64();
                m.close().await.unwrap();
                secs
            })
        })
        .collect();
    let mut secs = 0.0;
    for h in hs {
        secs = f64::max(secs, h.await.unwrap());
    }
    (count * msg) as f64 / secs
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let json = args
        .iter()
        .position(|a| a == "--json")
        .and_then(|i| args.get(i + 1).cloned());
    let (iters, nrounds, total) = if quick {
        (200, 100, 64 << 20)
    } else {
        (2000, 500, 512 << 20)
    };

    if args.iter().any(|a| a == "--netem-rounds") {
        // All-to-all rounds through the link emulator (1 ms RTT, 1 Gbit/s, calibrated): a round
        // should take about one one-way delay (0.5 ms) plus the loopback round cost.
        let p = coterie_net::netem::LinkParams::new(Duration::from_millis(1), 1000.0)
            .calibrated(51)
            .unwrap();
        for n in [2, 4] {
            let (g, relays) = tls_group_via(n, Some(p)).await;
            let t = rounds(g, 200).await;
            drop(relays);
            println!(
                "netem 1 ms / 1 Gbit/s, n = {n}: all-to-all round {:.3} ms",
                t * 1e3
            );
        }
        return;
    }
    if args.iter().any(|a| a == "--tls-bulk-only") {
        // For profiling: just the TLS bulk transfer.
        let tls = bulk(tls_group(2).await, total, false).await;
        println!("TLS mesh bulk {:.0} MB/s", tls / 1e6);
        return;
    }
    let ping = raw_tcp_pingpong(iters).await;
    println!(
        "raw TCP ping-pong RTT (median of {iters}): {:.1} us",
        ping * 1e6
    );
    let mut round_rows = Vec::new();
    for n in [4, 8, 16] {
        // interleaved repetitions, best median of each (see the bulk note below)
        let (mut raw, mut tls, mut mem) = (f64::MAX, f64::MAX, f64::MAX);
        for _ in 0..3 {
            raw = raw.min(raw_tcp_rounds(n, nrounds).await);
            tls = tls.min(rounds(tls_group(n).await, nrounds).await);
            mem = mem.min(rounds(InMemoryMesh::group(n, MeshOptions::default()), nrounds).await);
        }
        println!(
            "n = {n:2}: all-to-all round over TLS {:.1} us (raw TCP RTT {:.1} us, overhead {:+.1} us; raw TCP all-to-all round {:.1} us, overhead {:+.1} us); in-memory {:.1} us",
            tls * 1e6,
            ping * 1e6,
            (tls - ping) * 1e6,
            raw * 1e6,
            (tls - raw) * 1e6,
            mem * 1e6
        );
        round_rows.push(format!(
            "{{\"n\": {n}, \"tls_round_us\": {:.2}, \"raw_tcp_rtt_us\": {:.2}, \"overhead_us\": {:.2}, \"raw_tcp_round_us\": {:.2}, \"overhead_vs_raw_round_us\": {:.2}, \"in_memory_round_us\": {:.2}}}",
            tls * 1e6,
            ping * 1e6,
            (tls - ping) * 1e6,
            raw * 1e6,
            (tls - raw) * 1e6,
            mem * 1e6
        ));
    }
    // Interleaved repetitions, best of each: on a shared 2-core machine a single pass of each
    // side measures the neighbours' load as much as the code.
    let reps = if quick { 3 } else { 5 };
    let mem_opts = MeshOptions {
        max_frame: 256 << 20,
        ..MeshOptions::default()
    };
    let (mut raw, mut bare, mut tls, mut tls_blob, mut mem) = (0f64, 0f64, 0f64, 0f64, 0f64);
    for _ in 0..reps {
        raw = raw.max(raw_tcp_bulk(total).await);
        bare = bare.max(bare_tls_bulk(total).await);
        tls = tls.max(bulk(tls_group(2).await, total, false).await);
        tls_blob = tls_blob.max(bulk(tls_group(2).await, total, true).await);
        mem = mem.max(bulk(InMemoryMesh::group(2, mem_opts.clone()), total, false).await);
    }
    println!(
        "bulk {} MiB (best of {reps}): raw TCP {:.0} MB/s; bare TLS stream {:.0} MB/s ({:.2}x raw TCP); TLS mesh {:.0} MB/s ({:.2}x raw TCP, {:.2}x bare TLS) with send_bytes/recv_bytes, {:.0} MB/s ({:.2}x raw TCP) with serde Blob; in-memory mesh {:.0} MB/s",
        total >> 20,
        raw / 1e6,
        bare / 1e6,
        bare / raw,
        tls / 1e6,
        tls / raw,
        tls / bare,
        tls_blob / 1e6,
        tls_blob / raw,
        mem / 1e6
    );
    if let Some(path) = json {
        let s = format!(
            "{{\n  \"bench\": \"coterie-net loopback\",\n  \"cores\": {},\n  \"raw_tcp_pingpong_rtt_us\": {:.2},\n  \"rounds\": [\n    {}\n  ],\n  \"bulk_bytes\": {total},\n  \"bulk_raw_tcp_MBps\": {:.1},\n  \"bulk_bare_tls_stream_MBps\": {:.1},\n  \"bulk_tls_mesh_MBps\": {:.1},\n  \"bulk_tls_over_raw\": {:.3},\n  \"bulk_tls_mesh_serde_blob_MBps\": {:.1},\n  \"bulk_in_memory_mesh_MBps\": {:.1}\n}}\n",
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(0),
            ping * 1e6,
            round_rows.join(",\n    "),
            raw / 1e6,
            bare / 1e6,
            tls / 1e6,
            tls / raw,
            tls_blob / 1e6,
            mem / 1e6
        );
        std::fs::write(&path, s).unwrap();
        println!("wrote {path}");
    }
}
