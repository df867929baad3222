//! Prometheus metrics of a decryption node ([`crate::node`]), fed from the events the node
//! reports ([`NodeEvent`]), and a minimal HTTP endpoint that serves them in the OpenMetrics text
//! format (`coterie party ... threshold --metrics 127.0.0.1:9464`).
//!
//! | metric | type | meaning |
//! |---|---|---|
//! | `coterie_threshold_node_info{party,role}` | info | this node's party id; role `coordinator` (node 0) or `follower` |
//! | `coterie_threshold_key_ready` | gauge | 1 once the key shares are loaded or generated |
//! | `coterie_threshold_serving` | gauge | 1 once the start-up synchronisation is done and the service runs |
//! | `coterie_threshold_pool_bundles_ready` | gauge | gate bundles ready in the pool |
//! | `coterie_threshold_pool_target_bundles` | gauge | gate bundles the node keeps ready |
//! | `coterie_threshold_pool_cursor` | gauge | gate bundles handed out so far (the gate store's durable cursor) |
//! | `coterie_threshold_material_left{kind}` | gauge | SPDZ_2k material left in the store: `triples`, `bits`, `randoms` |
//! | `coterie_threshold_material_low` | gauge | 1 while the top-up is paused for lack of material |
//! | `coterie_threshold_decryptions_total` | counter | ciphertexts decrypted |
//! | `coterie_threshold_batches_total` | counter | decryption runs (batches) |
//! | `coterie_threshold_batch_duration_seconds` | histogram | wall time of a decryption run |
//! | `coterie_threshold_requests_refused_total{reason}` | counter | requests answered with an error (node 0 only): `malformed`, `no_randoms`, `no_gates`, `aborted`, `waiting` |
//! | `coterie_threshold_topup_steps_total` | counter | gate preprocessing steps |
//! | `coterie_threshold_bundles_prepared_total` | counter | gate bundles made |
//!
//! **The endpoint is unauthenticated and unencrypted**: bind it to a loopback or private
//! interface only. It shows no secret, but counts and timings of the service's traffic.
//!
//! # Example
//!
//! ```
//! use coterie_threshold::metrics::NodeMetrics;
//! use coterie_threshold::node::NodeEvent;
//! use coterie_threshold::service::Event;
//! let m = NodeMetrics::new(0);
//! m.observe(&NodeEvent::Service(Event::Decrypted { batch: 3, available: 5, micros: 1200 }));
//! let text = m.encode();
//! assert!(text.contains("coterie_threshold_decryptions_total 3"));
//! assert!(text.ends_with("# EOF\n"));
//! ```

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::node::NodeEvent;
use crate::service::{Event, Refusal};

/// The Content-Type of [`NodeMetrics::encode`]'s output (OpenMetrics text format 1.0.0).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// Largest HTTP request head the endpoint reads (bytes); a longer one gets status 431.
pub const MAX_REQUEST: usize = 8 << 10;
/// How long the endpoint waits for a request head, and then for its answer to be written.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections served at once; more are closed at once.
const MAX_CONNECTIONS: usize = 32;

type Label = [(&'static str, &'static str); 1];

const KINDS: [&str; 3] = ["triples", "bits", "randoms"];
const REASONS: [Refusal; 5] = [
    Refusal::Malformed,
    Refusal::NoRandoms,
    Refusal::NoGates,
    Refusal::Aborted,
    Refusal::Waiting,
];

/// The metrics of one decryption node (see the module docs for the names). Cloning gives
/// another handle on the same metrics; updating is lock-free.
#[derive(Clone)]
pub struct NodeMetrics {
    registry: Arc<Registry>,
    key_ready: Gauge,
    serving: Gauge,
    pool_ready: Gauge,
    pool_target: Gauge,
    pool_cursor: Gauge,
    material: Family<Label, Gauge>,
    material_low: Gauge,
    decryptions: Counter,
    batches: Counter,
    batch_seconds: Histogram,
    refused: Family<Label, Counter>,
    topups: Counter,
    prepared: Counter,
}

impl std::fmt::Debug for NodeMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NodeMetrics { .. }")
    }
}

fn gauge(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl NodeMetrics {
    /// Empty metrics of node `party` (node 0 is the coordinator).
    ///
    /// # Example
    ///
    /// ```
    /// let m = coterie_threshold::metrics::NodeMetrics::new(2);
    /// assert!(m.encode().contains(r#"coterie_threshold_node_info{party="2",role="follower"} 1"#));
    /// ```
    pub fn new(party: usize) -> Self {
        let mut r = Registry::with_prefix("coterie_threshold");
        let role = if party == 0 {
            "coordinator"
        } else {
            "follower"
        };
        r.register(
            "node",
            "This node's party id and role",
            Info::new(vec![
                ("party".to_string(), party.to_string()),
                ("role".to_string(), role.to_string()),
            ]),
        );
        let m = Self {
            registry: Arc::new(Registry::default()),
            key_ready: Gauge::default(),
            serving: Gauge::default(),
            pool_ready: Gauge::default(),
            pool_target: Gauge::default(),
            pool_cursor: Gauge::default(),
            material: Family::default(),
            material_low: Gauge::default(),
            decryptions: Counter::default(),
            batches: Counter::default(),
            batch_seconds: Histogram::new(exponential_buckets(0.005, 2.0, 14)),
            refused: Family::default(),
            topups: Counter::default(),
            prepared: Counter::default(),
        };
        for k in KINDS {
            drop(m.material.get_or_create(&[("kind", k)]));
        }
        for reason in REASONS {
            drop(m.refused.get_or_create(&[("reason", reason.as_str())]));
        }
        r.register(
            "key_ready",
            "1 once the key shares are loaded or generated",
            m.key_ready.clone(),
        );
        r.register(
            "serving",
            "1 once start-up is done and the service runs",
            m.serving.clone(),
        );
        r.register(
            "pool_bundles_ready",
            "Gate bundles ready in the pool",
            m.pool_ready.clone(),
        );
        r.register(
            "pool_target_bundles",
            "Gate bundles the node keeps ready",
            m.pool_target.clone(),
        );
        r.register(
            "pool_cursor",
            "Gate bundles handed out so far (durable cursor of the gate store)",
            m.pool_cursor.clone(),
        );
        r.register(
            "material_left",
            "SPDZ_2k material left in the store, by kind",
            m.material.clone(),
        );
        r.register(
            "material_low",
            "1 while the gate top-up is paused for lack of SPDZ_2k material",
            m.material_low.clone(),
        );
        r.register(
            "decryptions",
            "Ciphertexts decrypted",
            m.decryptions.clone(),
        );
        r.register("batches", "Decryption runs (batches)", m.batches.clone());
        r.register(
            "batch_duration_seconds",
            "Wall time of a decryption run",
            m.batch_seconds.clone(),
        );
        r.register(
            "requests_refused",
            "Client requests answered with an error, by reason (coordinator only)",
            m.refused.clone(),
        );
        r.register("topup_steps", "Gate preprocessing steps", m.topups.clone());
        r.register("bundles_prepared", "Gate bundles made", m.prepared.clone());
        Self {
            registry: Arc::new(r),
            ..m
        }
    }

    /// Updates the metrics from one event of the node (pass every event
    /// [`crate::node::run_node`] reports).
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_threshold::metrics::NodeMetrics;
    /// use coterie_threshold::node::NodeEvent;
    /// let m = NodeMetrics::new(0);
    /// m.observe(&NodeEvent::Pool { cursor: 4, available: 8, target: 8 });
    /// assert!(m.encode().contains("coterie_threshold_pool_bundles_ready 8"));
    /// ```
    pub fn observe(&self, e: &NodeEvent) {
        match e {
            NodeEvent::KeyReady { .. } => {
                self.key_ready.set(1);
            }
            NodeEvent::Pool {
                cursor,
                available,
                target,
            } => {
                self.pool_cursor.set(gauge(*cursor));
                self.pool_ready.set(gauge(*available));
                self.pool_target.set(gauge(*target));
                self.serving.set(1);
            }
            NodeEvent::StartUp(_)
            | NodeEvent::Serving { .. }
            | NodeEvent::PeerLost { .. }
            | NodeEvent::Waiting { .. }
            | NodeEvent::Reconnected { .. } => {}
            NodeEvent::Service(e) => self.observe_service(e),
        }
    }

    fn set_material(&self, kind: &'static str, v: u64) {
        self.material.get_or_create(&[("kind", kind)]).set(gauge(v));
    }

    fn observe_service(&self, e: &Event) {
        match e {
            Event::Prepared { made, available } => {
                self.topups.inc();
                self.prepared.inc_by(u64::from(*made));
                self.pool_ready.set(gauge(*available));
                self.material_low.set(0);
            }
            Event::Decrypted {
                batch,
                available,
                micros,
            } => {
                self.decryptions.inc_by(*batch as u64);
                self.batches.inc();
                self.batch_seconds.observe(*micros as f64 / 1e6);
                self.pool_ready.set(gauge(*available));
                self.pool_cursor.inc_by(gauge(*batch as u64));
            }
            Event::MaterialLow { triples, bits } => {
                self.material_low.set(1);
                self.set_material("triples", *triples);
                self.set_material("bits", *bits);
            }
            Event::Material {
                triples,
                bits,
                randoms,
            } => {
                self.set_material("triples", *triples);
                self.set_material("bits", *bits);
                self.set_material("randoms", *randoms);
            }
            Event::Refused { reason, count } => {
                self.refused
                    .get_or_create(&[("reason", reason.as_str())])
                    .inc_by(*count as u64);
            }
            Event::GatesTaken { .. } => {}
        }
    }

    /// The metrics in the OpenMetrics text format (ends with `# EOF`; serve it with
    /// [`CONTENT_TYPE`]).
    ///
    /// # Example
    ///
    /// ```
    /// let text = coterie_threshold::metrics::NodeMetrics::new(0).encode();
    /// assert!(text.contains(r#"coterie_threshold_requests_refused_total{reason="malformed"} 0"#));
    /// ```
    pub fn encode(&self) -> String {
        let mut s = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut s, &self.registry);
        s
    }
}

/// The HTTP response (head and body) to one request head: `GET /metrics` (or `HEAD`) gets the
/// metrics, another path 404, another method 405, anything that is not an HTTP/1.x request
/// line 400. The query string is ignored. Never panics.
///
/// # Example
///
/// ```
/// use coterie_threshold::metrics::{NodeMetrics, respond};
/// let m = NodeMetrics::new(0);
/// let ok = String::from_utf8(respond(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &m)).unwrap();
/// assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"));
/// assert!(respond(b"GET /other HTTP/1.1\r\n\r\n", &m).starts_with(b"HTTP/1.1 404 "));
/// ```
pub fn respond(head: &[u8], metrics: &NodeMetrics) -> Vec<u8> {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let parts: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    let [method, target, version] = parts[..] else {
        return answer(400, "Bad Request", "text/plain", b"bad request\n", true);
    };
    if !version.starts_with(b"HTTP/1.")
        || !target.starts_with(b"/")
        || method.is_empty()
        || !method.iter().all(u8::is_ascii_uppercase)
    {
        return answer(400, "Bad Request", "text/plain", b"bad request\n", true);
    }
    let path = target.split(|&b| b == b'?').next().unwrap_or_default();
    let body_too = match method {
        b"GET" => true,
        b"HEAD" => false,
        _ => {
            return answer(
                405,
                "Method Not Allowed",
                "text/plain",
                b"only GET and HEAD\n",
                true,
            );
        }
    };
    if path != b"/metrics" {
        return answer(404, "Not Found", "text/plain", b"not found\n", body_too);
    }
    answer(
        200,
        "OK",
        CONTENT_TYPE,
        metrics.encode().as_bytes(),
        body_too,
    )
}

fn answer(code: u16, reason: &str, ctype: &str, body: &[u8], body_too: bool) -> Vec<u8> {
    let allow = if code == 405 {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let mut out = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if body_too {
        out.extend_from_slice(body);
    }
    out
}

/// Binds the metrics endpoint's listener at `addr` (e.g. `127.0.0.1:9464`; port 0 picks a
/// free one). Bind a loopback or private address only: the endpoint is unauthenticated.
///
/// # Example
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let l = coterie_threshold::metrics::bind("127.0.0.1:0").await.unwrap();
/// assert!(l.local_addr().unwrap().ip().is_loopback());
/// # });
/// ```
pub async fn bind(addr: &str) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}

/// Serves `metrics` over plain HTTP/1.1 on `listener` until the task is dropped or aborted:
/// one request per connection, request heads of at most [`MAX_REQUEST`] bytes, at most 32
/// connections at once (more are closed), 5 s to send a request. See [`respond`].
///
/// # Example
///
/// ```no_run
/// use coterie_threshold::metrics::{NodeMetrics, bind, serve};
/// # async fn f() -> std::io::Result<()> {
/// let m = NodeMetrics::new(0);
/// let task = tokio::spawn(serve(bind("127.0.0.1:9464").await?, m.clone()));
/// // ... feed `m.observe(&event)` from the node's events; at the end:
/// task.abort();
/// # Ok(()) }
/// ```
pub async fn serve(listener: TcpListener, metrics: NodeMetrics) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(e) => {
                // e.g. out of file descriptors: wait instead of spinning
                tracing::warn!(error = %e, "metrics endpoint: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            continue; // too many connections: this one is dropped (closed)
        };
        let m = metrics.clone();
        tokio::spawn(async move {
            let _ = handle(stream, &m).await;
            drop(permit);
        });
    }
}

/// Reads one request head (bounded in size and time) and writes the answer.
async fn handle(mut stream: TcpStream, metrics: &NodeMetrics) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    let complete =
        |b: &[u8]| b.windows(4).any(|w| w == b"\r\n\r\n") || b.windows(2).any(|w| w == b"\n\n");
    let read = tokio::time::timeout(IO_TIMEOUT, async {
        loop {
            let k = stream.read(&mut chunk).await?;
            if k == 0 {
                return Ok::<bool, std::io::Error>(!buf.is_empty());
            }
            buf.extend_from_slice(&chunk[..k]);
            if complete(&buf) {
                return Ok(true);
            }
            if buf.len() > MAX_REQUEST {
                return Ok(false);
            }
        }
    })
    .await;
    let reply = match read {
        Ok(Ok(true)) => respond(&buf, metrics),
        Ok(Ok(false)) if buf.len() > MAX_REQUEST => answer(
            431,
            "Request Header Fields Too Large",
            "text/plain",
            b"request too large\n",
            true,
        ),
        // empty connection, read error or timeout: nothing to answer
        _ => return Ok(()),
    };
    tokio::time::timeout(IO_TIMEOUT, async {
        stream.write_all(&reply).await?;
        stream.shutdown().await
    })
    .await
    .unwrap_or(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str, name: &str) -> Option<String> {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ').map(str::to_string))
    }

    #[test]
    fn events_update_the_metrics() {
        let m = NodeMetrics::new(1);
        m.observe(&NodeEvent::KeyReady {
            n: 1024,
            samples: 64,
            digest: "00".into(),
        });
        m.observe(&NodeEvent::Pool {
            cursor: 10,
            available: 2,
            target: 8,
        });
        let svc = |e| m.observe(&NodeEvent::Service(e));
        svc(Event::Material {
            triples: 100,
            bits: 50,
            randoms: 20,
        });
        svc(Event::Prepared {
            made: 4,
            available: 6,
        });
        svc(Event::Decrypted {
            batch: 3,
            available: 3,
            micros: 2500,
        });
        svc(Event::Decrypted {
            batch: 2,
            available: 1,
            micros: 1500,
        });
        svc(Event::Refused {
            reason: Refusal::Malformed,
            count: 1,
        });
        svc(Event::Refused {
            reason: Refusal::NoGates,
            count: 4,
        });
        svc(Event::MaterialLow {
            triples: 7,
            bits: 3,
        });
        let t = m.encode();
        let v = |name: &str| value(&t, name).unwrap_or_else(|| panic!("{name} missing in\n{t}"));
        assert_eq!(v("coterie_threshold_key_ready"), "1");
        assert_eq!(v("coterie_threshold_serving"), "1");
        assert_eq!(v("coterie_threshold_pool_bundles_ready"), "1");
        assert_eq!(v("coterie_threshold_pool_target_bundles"), "8");
        assert_eq!(v("coterie_threshold_pool_cursor"), "15");
        assert_eq!(v("coterie_threshold_decryptions_total"), "5");
        assert_eq!(v("coterie_threshold_batches_total"), "2");
        assert_eq!(v("coterie_threshold_batch_duration_seconds_count"), "2");
        assert_eq!(v("coterie_threshold_topup_steps_total"), "1");
        assert_eq!(v("coterie_threshold_bundles_prepared_total"), "4");
        assert_eq!(v("coterie_threshold_material_low"), "1");
        assert_eq!(v(r#"coterie_threshold_material_left{kind="triples"}"#), "7");
        assert_eq!(v(r#"coterie_threshold_material_left{kind="bits"}"#), "3");
        assert_eq!(
            v(r#"coterie_threshold_material_left{kind="randoms"}"#),
            "20"
        );
        let refused = |r: &str| {
            v(&format!(
                r#"coterie_threshold_requests_refused_total{{reason="{r}"}}"#
            ))
        };
        assert_eq!(refused("malformed"), "1");
        assert_eq!(refused("no_gates"), "4");
        assert_eq!(refused("no_randoms"), "0");
        assert_eq!(refused("aborted"), "0");
        assert_eq!(refused("waiting"), "0");
        assert!(t.contains(r#"coterie_threshold_node_info{party="1",role="follower"} 1"#));
        assert!(t.contains("# TYPE coterie_threshold_decryptions counter"));
        assert!(t.ends_with("# EOF\n"));
        // a clone is a handle on the same metrics
        m.clone().observe(&NodeEvent::Service(Event::Prepared {
            made: 4,
            available: 5,
        }));
        let t = m.encode();
        assert_eq!(value(&t, "coterie_threshold_material_low").unwrap(), "0");
        assert_eq!(
            value(&t, "coterie_threshold_topup_steps_total").unwrap(),
            "2"
        );
    }

    #[test]
    fn responses_to_good_and_bad_requests() {
        let m = NodeMetrics::new(0);
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        let ok = text(respond(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", &m));
        let (head, body) = ok.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains(&format!("Content-Type: {CONTENT_TYPE}\r\n")));
        assert!(head.contains(&format!("Content-Length: {}\r\n", body.len())));
        assert_eq!(body, m.encode());
        let head_only = text(respond(b"HEAD /metrics HTTP/1.0\n\n", &m));
        assert!(head_only.starts_with("HTTP/1.1 200 OK") && head_only.ends_with("\r\n\r\n"));
        let status = |req: &[u8]| text(respond(req, &m))[9..12].to_string();
        assert_eq!(status(b"GET /other HTTP/1.1\r\n\r\n"), "404");
        assert_eq!(status(b"GET /metricsx HTTP/1.1\r\n\r\n"), "404");
        assert_eq!(status(b"POST /metrics HTTP/1.1\r\n\r\n"), "405");
        for bad in [
            &b""[..],
            b"\r\n\r\n",
            b"GET\r\n\r\n",
            b"GET /metrics\r\n\r\n",
            b"GET /metrics HTTP/1.1 x\r\n\r\n",
            b"GET metrics HTTP/1.1\r\n\r\n",
            b"GET /metrics SMTP\r\n\r\n",
            b"\xff\xfe /metrics HTTP/1.1\r\n\r\n",
            b"GET  /metrics HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(status(bad), "400", "{bad:?}");
        }
    }

    async fn exchange(addr: std::net::SocketAddr, req: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).await.unwrap();
        // the server may answer (and close) before it has read everything
        let _ = s.write_all(req).await;
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out).await;
        String::from_utf8_lossy(&out).into_owned()
    }

    #[tokio::test]
    async fn the_endpoint_answers_over_tcp_and_bounds_requests() {
        let m = NodeMetrics::new(0);
        let l = bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let task = tokio::spawn(serve(l, m.clone()));
        m.observe(&NodeEvent::Service(Event::Decrypted {
            batch: 2,
            available: 0,
            micros: 10,
        }));
        let ok = exchange(addr, b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n").await;
        assert!(ok.starts_with("HTTP/1.1 200 OK"), "{ok}");
        assert!(ok.contains("coterie_threshold_decryptions_total 2"));
        let nf = exchange(addr, b"GET /other HTTP/1.1\r\n\r\n").await;
        assert!(nf.starts_with("HTTP/1.1 404 "), "{nf}");
        let big = vec![b'a'; MAX_REQUEST * 4];
        let r = exchange(addr, &big).await;
        assert!(r.is_empty() || r.starts_with("HTTP/1.1 431 "), "{r}");
        // a client that connects and closes without a request gets nothing; the server goes on
        drop(TcpStream::connect(addr).await.unwrap());
        let ok = exchange(addr, b"GET /metrics HTTP/1.0\n\n").await;
        assert!(ok.starts_with("HTTP/1.1 200 OK"), "{ok}");
        task.abort();
    }
}
