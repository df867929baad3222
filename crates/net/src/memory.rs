//! In-memory mesh: all parties in one process (tasks), linked by channels. Frames are encoded and
//! decoded exactly as on the network, so tests exercise the same code paths and byte counts.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::frame::{self, AbortNotice};
use crate::mesh::{Core, MeshOptions, Stats, set_poison};
use crate::{Error, Mesh, PartyId, Result};

/// One party's end of an in-memory mesh; create a whole group with [`InMemoryMesh::group`].
///
/// As over TLS, dropping a party without [`Mesh::close`] (its task was cancelled, panicked, or
/// returned early with an error) counts as a crash: every pending and later receive in the group
/// fails with [`Error::Disconnected`] naming it.
pub struct InMemoryMesh {
    core: Core,
    out: Vec<Option<mpsc::UnboundedSender<Vec<u8>>>>,
    poison_tx: Arc<watch::Sender<Option<Error>>>,
    closed: bool,
}

impl InMemoryMesh {
    /// Creates the `n` connected ends of a new group; give each to its own task.
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let mut g = InMemoryMesh::group(2, MeshOptions::default());
    /// let mut b = g.pop().unwrap();
    /// let mut a = g.pop().unwrap();
    /// a.send(1, &"hello".to_string()).await.unwrap();
    /// assert_eq!(b.recv::<String>(0).await.unwrap(), "hello");
    /// a.close().await.unwrap();
    /// b.close().await.unwrap();
    /// # });
    /// ```
    pub fn group(n: usize, opts: MeshOptions) -> Vec<InMemoryMesh> {
        let (poison_tx, poison_rx) = watch::channel(None);
        let poison_tx = Arc::new(poison_tx);
        // senders[i][j]: i -> j ; receivers[j][i]
        let mut senders: Vec<Vec<Option<mpsc::UnboundedSender<Vec<u8>>>>> =
            (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
        let mut receivers: Vec<Vec<Option<mpsc::UnboundedReceiver<Vec<u8>>>>> =
            (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    let (tx, rx) = mpsc::unbounded_channel();
                    senders[i][j] = Some(tx);
                    receivers[j][i] = Some(rx);
                }
            }
        }
        senders
            .into_iter()
            .zip(receivers)
            .enumerate()
            .map(|(id, (out, inbox))| InMemoryMesh {
                core: Core::new(id, n, opts.clone(), inbox, poison_rx.clone()),
                out,
                poison_tx: poison_tx.clone(),
                closed: false,
            })
            .collect()
    }
}

impl Mesh for InMemoryMesh {
    fn id(&self) -> PartyId {
        self.core.id
    }
    fn n(&self) -> usize {
        self.core.n
    }
    fn options(&self) -> &MeshOptions {
        &self.core.opts
    }
    fn set_timeout(&mut self, timeout: Duration) {
        self.core.opts.timeout = timeout;
    }
    fn stats(&self) -> &Stats {
        &self.core.stats
    }

    async fn send_frame<'a>(&'a mut self, to: PartyId, frame: &'a mut [u8]) -> Result<()> {
        self.core.stamp(to, frame)?;
        // A peer may abort and close between the stamp's check of the abort and this send: then
        // its abort, not the closed channel, is the news (a popk test saw `Closed` under load).
        let Some(tx) = self.out[to].as_ref() else {
            return Err(self.poisoned_or(Error::Closed { party: to }));
        };
        if tx.send(frame[frame::LEN_PREFIX..].to_vec()).is_err() {
            return Err(self.poisoned_or(Error::Closed { party: to }));
        }
        Ok(())
    }

    async fn recv_frame(&mut self, from: PartyId, tag: u32, deadline: Instant) -> Result<Vec<u8>> {
        self.core.recv_frame(from, tag, deadline).await
    }

    async fn abort(&mut self, reason: &str) -> Error {
        let notice = AbortNotice {
            origin: self.core.id as u32,
            reason: frame::bounded_reason(reason),
            disconnected: false,
        };
        let e = Error::Aborted {
            party: self.core.id,
            reason: notice.reason,
        };
        if set_poison(&self.poison_tx, e.clone()) {
            tracing::warn!(party = self.core.id, %e, "abort");
        }
        self.poisoned_or(e)
    }

    async fn close(mut self) -> Result<()> {
        self.closed = true;
        self.out.iter_mut().for_each(|o| *o = None);
        match self.core.poisoned() {
            Some(e @ Error::Aborted { .. }) => Err(e),
            _ => Ok(()),
        }
    }
}

impl InMemoryMesh {
    fn poisoned_or(&self, e: Error) -> Error {
        self.core.poisoned().unwrap_or(e)
    }
}

impl Drop for InMemoryMesh {
    fn drop(&mut self) {
        if !self.closed {
            let cause = if std::thread::panicking() {
                "party panicked"
            } else {
                "party stopped without closing the session"
            };
            set_poison(
                &self.poison_tx,
                Error::Disconnected {
                    party: self.core.id,
                    cause: cause.into(),
                },
            );
        }
    }
}
