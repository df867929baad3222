//! A tampering mesh for cheating tests.
//!
//! [`TamperMesh`] wraps any [`Mesh`] and lets a test make *this* party misbehave on the wire:
//! rewrite, replace, drop or delay some of its outgoing messages. It is a testing tool: protocol
//! code never knows it runs over one, so cheating tests exercise the honest code path of every
//! other party, and no production type carries cheat hooks or hidden options.
//!
//! A [`Rule`] is a selector ([`Select`]: destination peer or any, protocol tag or any, and which
//! of the matching messages — the `i`-th, a range, or all) plus an action. Rules are checked in
//! the order they were added; every rule whose selector matches sees the message and counts it,
//! so two rules can act on the same message one after the other (a drop ends the chain). Each
//! rule hands back a [`RuleCounter`] that a test keeps to assert that the rule fired.
//!
//! Messages are seen as frames, after encoding: payloads are exactly the bytes
//! [`Mesh::send_tagged`] (postcard) or [`Mesh::send_bytes`] (a postcard byte string, i.e. a
//! [`crate::Blob`]) put on the wire, so a typed rewrite decodes with postcard, changes the value
//! and re-encodes it. A message whose selector does not match is passed through untouched (and
//! without copying, for [`Mesh::send_bytes`]).
//!
//! Dropping a message means this party never sends it: its later messages on that link take the
//! dropped message's place in the link's sequence, so the peer either times out waiting
//! ([`crate::Error::Timeout`]) or receives the next message where it expected the dropped one
//! (typically [`crate::Error::UnexpectedMessage`] for a different tag). A rewritten frame may
//! exceed [`MeshOptions::max_frame`] (up to 4 GiB): the receiver's own bound is what a test of an
//! oversized message should exercise.
//!
//! # Example
//!
//! ```
//! use coterie_net::tamper::{Select, TamperMesh};
//! use coterie_net::{InMemoryMesh, Mesh, MeshOptions};
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let mut g = InMemoryMesh::group(2, MeshOptions::default());
//! let mut honest = g.pop().unwrap();
//! let mut cheat = TamperMesh::new(g.pop().unwrap());
//! // Party 0 adds one to the second message it sends to party 1 with tag 7.
//! let fired = cheat.add(Select::to(1).tag(7).nth(1).rewrite(|v: &mut u64| *v += 1));
//! let t = tokio::spawn(async move {
//!     for v in [10u64, 20, 30] {
//!         cheat.send_tagged(1, 7, &v).await?;
//!     }
//!     cheat.close().await
//! });
//! let mut got = Vec::new();
//! for _ in 0..3 {
//!     got.push(honest.recv_tagged::<u64>(0, 7).await.unwrap());
//! }
//! t.await.unwrap().unwrap();
//! honest.close().await.unwrap();
//! assert_eq!(got, [10, 21, 30]);
//! assert_eq!((fired.matched(), fired.fired()), (3, 1));
//! # });
//! ```

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use crate::frame::{self, HEADER_LEN, LEN_PREFIX};
use crate::mesh::{MeshOptions, Stats};
use crate::{Error, Mesh, PartyId, Result};

/// Which messages a rule acts on: a destination (or any), a tag (or any), and which of the
/// messages matching both, counted from 0 in the order this party sends them.
#[derive(Debug, Clone)]
pub struct Select {
    to: Option<PartyId>,
    tag: Option<u32>,
    which: Range<u64>,
}

impl Select {
    /// Every outgoing message (narrow it with [`Select::tag`], [`Select::nth`], ...).
    pub fn any() -> Self {
        Self {
            to: None,
            tag: None,
            which: 0..u64::MAX,
        }
    }

    /// Every outgoing message to party `peer`.
    pub fn to(peer: PartyId) -> Self {
        Self {
            to: Some(peer),
            ..Self::any()
        }
    }

    /// Only messages with protocol tag `tag` (0 for the untagged calls).
    pub fn tag(mut self, tag: u32) -> Self {
        self.tag = Some(tag);
        self
    }

    /// Only the `i`-th matching message (from 0): `Select::to(1).tag(7).nth(2)` is the third
    /// message to party 1 with tag 7.
    pub fn nth(self, i: u64) -> Self {
        self.indices(i..i.saturating_add(1))
    }

    /// Only the matching messages whose index (from 0) lies in `range`.
    pub fn indices(mut self, range: Range<u64>) -> Self {
        self.which = range;
        self
    }

    /// Every matching message (the default).
    pub fn all(self) -> Self {
        self.indices(0..u64::MAX)
    }

    fn matches(&self, to: PartyId, tag: u32) -> bool {
        self.to.is_none_or(|p| p == to) && self.tag.is_none_or(|t| t == tag)
    }

    /// Rewrites the raw payload bytes (the postcard encoding after the frame header) in place.
    pub fn rewrite_bytes(self, f: impl FnMut(&mut Vec<u8>) + Send + 'static) -> Rule {
        Rule::new(self, Action::Bytes(Box::new(f)))
    }

    /// Decodes the payload as a `T` with postcard (as [`Mesh::recv_tagged`] would), lets `f`
    /// change it, and re-encodes it. A payload that does not decode as `T` makes the send fail
    /// with [`Error::Encode`] (the test chose the wrong type or tag). For [`Mesh::send_bytes`]
    /// messages use `T = `[`crate::Blob`].
    pub fn rewrite<T, F>(self, mut f: F) -> Rule
    where
        T: Serialize + DeserializeOwned,
        F: FnMut(&mut T) + Send + 'static,
    {
        let typed = move |payload: &[u8]| -> std::result::Result<Vec<u8>, String> {
            let mut v: T = frame::decode_payload(payload)?;
            f(&mut v);
            postcard::to_allocvec(&v).map_err(|e| e.to_string())
        };
        Rule::new(self, Action::Typed(Box::new(typed)))
    }

    /// Sends `value` (encoded as [`Mesh::send_tagged`] encodes it) instead of the message.
    pub fn replace<T: Serialize + ?Sized>(self, value: &T) -> Rule {
        let encoded = postcard::to_allocvec(value).map_err(|e| e.to_string());
        Rule::new(self, Action::Replace(encoded))
    }

    /// Does not send the message at all.
    pub fn drop_message(self) -> Rule {
        Rule::new(self, Action::Drop)
    }

    /// Holds the message for `delay` before sending it: this party's task waits, as over a slow
    /// link, so a delay beyond the peer's receive timeout makes the peer time out.
    pub fn delay(self, delay: Duration) -> Rule {
        Rule::new(self, Action::Delay(delay))
    }
}

type TypedRewrite = dyn FnMut(&[u8]) -> std::result::Result<Vec<u8>, String> + Send;
type BytesRewrite = dyn FnMut(&mut Vec<u8>) + Send;

enum Action {
    Bytes(Box<BytesRewrite>),
    Typed(Box<TypedRewrite>),
    Replace(std::result::Result<Vec<u8>, String>),
    Drop,
    Delay(Duration),
}

impl std::fmt::Debug for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Action::Bytes(_) => "rewrite bytes",
            Action::Typed(_) => "rewrite value",
            Action::Replace(_) => "replace",
            Action::Drop => "drop",
            Action::Delay(_) => "delay",
        })
    }
}

/// A selector and what to do with the messages it selects; made by the action methods of
/// [`Select`] and installed with [`TamperMesh::add`].
#[derive(Debug)]
pub struct Rule {
    select: Select,
    action: Action,
    counter: RuleCounter,
}

impl Rule {
    fn new(select: Select, action: Action) -> Self {
        Self {
            select,
            action,
            counter: RuleCounter::default(),
        }
    }

    /// The rule's counters (the same ones [`TamperMesh::add`] returns).
    pub fn counter(&self) -> RuleCounter {
        self.counter.clone()
    }
}

/// Counters of one rule, shared with the mesh (clone it freely; it stays valid after the mesh
/// moved into a task or was closed).
#[derive(Debug, Clone, Default)]
pub struct RuleCounter {
    inner: Arc<(AtomicU64, AtomicU64)>,
}

impl RuleCounter {
    /// Outgoing messages that matched the rule's peer and tag so far (whether or not their index
    /// was selected).
    pub fn matched(&self) -> u64 {
        self.inner.0.load(Ordering::Relaxed)
    }

    /// Messages the rule acted on so far.
    pub fn fired(&self) -> u64 {
        self.inner.1.load(Ordering::Relaxed)
    }
}

/// A [`Mesh`] that passes everything through to `M`, except the outgoing messages its [`Rule`]s
/// select. A testing tool for cheating parties; see the [module docs](self).
pub struct TamperMesh<M> {
    inner: M,
    rules: Vec<Rule>,
}

/// What the rules decided for one message.
enum Plan {
    /// No rule selected it.
    Untouched,
    /// Send (possibly rewritten) after an optional delay.
    Send {
        payload: Option<Vec<u8>>,
        delay: Duration,
    },
    /// Do not send.
    Dropped,
}

impl<M: Mesh> TamperMesh<M> {
    /// Wraps `inner` with no rules (then it behaves exactly like `inner`).
    pub fn new(inner: M) -> Self {
        Self {
            inner,
            rules: Vec::new(),
        }
    }

    /// Wraps `inner` with `rules`.
    pub fn with_rules(inner: M, rules: impl IntoIterator<Item = Rule>) -> Self {
        Self {
            inner,
            rules: rules.into_iter().collect(),
        }
    }

    /// Adds a rule after the existing ones and returns its counters.
    pub fn add(&mut self, rule: Rule) -> RuleCounter {
        let c = rule.counter();
        self.rules.push(rule);
        c
    }

    /// Removes every rule (later messages pass untouched).
    pub fn clear_rules(&mut self) {
        self.rules.clear();
    }

    /// The wrapped mesh.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// The wrapped mesh, mutably (messages sent through it directly are not tampered with).
    pub fn inner_mut(&mut self) -> &mut M {
        &mut self.inner
    }

    /// Unwraps the mesh.
    pub fn into_inner(self) -> M {
        self.inner
    }

    /// Counts the message against every rule and, where rules select it, applies their actions to
    /// its payload (fetched by `payload` only when a rule needs it).
    fn plan(&mut self, to: PartyId, tag: u32, payload: impl FnOnce() -> Vec<u8>) -> Result<Plan> {
        let mut selected = false;
        let mut payload = Some(payload);
        let mut current: Option<Vec<u8>> = None;
        let mut delay = Duration::ZERO;
        for rule in &mut self.rules {
            if !rule.select.matches(to, tag) {
                continue;
            }
            let index = rule.counter.inner.0.fetch_add(1, Ordering::Relaxed);
            if !rule.select.which.contains(&index) {
                continue;
            }
            rule.counter.inner.1.fetch_add(1, Ordering::Relaxed);
            selected = true;
            let encode =
                |e: String| Error::Encode(format!("tamper rule on tag {tag} to {to}: {e}"));
            match &mut rule.action {
                Action::Drop => return Ok(Plan::Dropped),
                Action::Delay(d) => delay += *d,
                Action::Replace(v) => current = Some(v.clone().map_err(encode)?),
                Action::Bytes(f) => {
                    let mut p = take(&mut current, &mut payload);
                    f(&mut p);
                    current = Some(p);
                }
                Action::Typed(f) => {
                    let p = take(&mut current, &mut payload);
                    current = Some(f(&p).map_err(encode)?);
                }
            }
        }
        Ok(if selected {
            Plan::Send {
                payload: current,
                delay,
            }
        } else {
            Plan::Untouched
        })
    }

    /// Sends `head` (prefix and header) followed by `payload` as one frame.
    async fn send_rewritten(&mut self, to: PartyId, head: &[u8], payload: &[u8]) -> Result<()> {
        let mut f = Vec::with_capacity(LEN_PREFIX + HEADER_LEN + payload.len());
        f.extend_from_slice(&head[..LEN_PREFIX + HEADER_LEN]);
        f.extend_from_slice(payload);
        frame::finish_frame(&mut f, usize::MAX).map_err(|e| Error::Encode(e.to_string()))?;
        self.inner.send_frame(to, &mut f).await
    }
}

/// The payload as rewritten so far, or else the original one.
fn take(current: &mut Option<Vec<u8>>, original: &mut Option<impl FnOnce() -> Vec<u8>>) -> Vec<u8> {
    match current.take() {
        Some(p) => p,
        None => original.take().map(|f| f()).unwrap_or_default(),
    }
}

/// The tag of a complete data frame, if it is long enough to have one.
fn frame_tag(head: &[u8]) -> Option<u32> {
    let t = head.get(LEN_PREFIX + 10..LEN_PREFIX + HEADER_LEN)?;
    Some(u32::from_le_bytes([t[0], t[1], t[2], t[3]]))
}

impl<M: Mesh> Mesh for TamperMesh<M> {
    fn id(&self) -> PartyId {
        self.inner.id()
    }
    fn n(&self) -> usize {
        self.inner.n()
    }
    fn options(&self) -> &MeshOptions {
        self.inner.options()
    }
    fn set_timeout(&mut self, timeout: Duration) {
        self.inner.set_timeout(timeout)
    }
    fn stats(&self) -> &Stats {
        self.inner.stats()
    }

    async fn send_frame<'a>(&'a mut self, to: PartyId, frame: &'a mut [u8]) -> Result<()> {
        let Some(tag) = frame_tag(frame) else {
            return self.inner.send_frame(to, frame).await;
        };
        let whole = &*frame;
        match self.plan(to, tag, || whole[LEN_PREFIX + HEADER_LEN..].to_vec())? {
            Plan::Untouched => self.inner.send_frame(to, frame).await,
            Plan::Dropped => Ok(()),
            Plan::Send { payload, delay } => {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                match payload {
                    None => self.inner.send_frame(to, frame).await,
                    // The caller's buffer is left as it is: broadcasts reuse it for other peers.
                    Some(p) => self.send_rewritten(to, frame, &p).await,
                }
            }
        }
    }

    async fn send_frame_parts<'a>(
        &'a mut self,
        to: PartyId,
        head: &'a mut [u8],
        body: &'a [u8],
    ) -> Result<()> {
        let Some(tag) = frame_tag(head) else {
            return self.inner.send_frame_parts(to, head, body).await;
        };
        let h = &*head;
        let joined = || {
            let mut p = h[LEN_PREFIX + HEADER_LEN..].to_vec();
            p.extend_from_slice(body);
            p
        };
        match self.plan(to, tag, joined)? {
            Plan::Untouched => self.inner.send_frame_parts(to, head, body).await,
            Plan::Dropped => Ok(()),
            Plan::Send { payload, delay } => {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                match payload {
                    None => self.inner.send_frame_parts(to, head, body).await,
                    Some(p) => self.send_rewritten(to, head, &p).await,
                }
            }
        }
    }

    async fn recv_frame(&mut self, from: PartyId, tag: u32, deadline: Instant) -> Result<Vec<u8>> {
        self.inner.recv_frame(from, tag, deadline).await
    }

    async fn abort(&mut self, reason: &str) -> Error {
        self.inner.abort(reason).await
    }

    async fn close(self) -> Result<()> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Blob, InMemoryMesh};

    fn opts(ms: u64) -> MeshOptions {
        MeshOptions {
            timeout: Duration::from_millis(ms),
            ..MeshOptions::default()
        }
    }

    #[test]
    fn selector_matches_peer_tag_and_index() {
        let s = Select::to(1).tag(7);
        assert!(s.matches(1, 7));
        assert!(!s.matches(2, 7));
        assert!(!s.matches(1, 8));
        assert!(Select::any().matches(5, 9));
        assert_eq!(Select::any().nth(2).which, 2..3);
        assert_eq!(Select::any().nth(u64::MAX).which, u64::MAX..u64::MAX);
        assert_eq!(Select::any().nth(2).all().which, 0..u64::MAX);
    }

    #[tokio::test]
    async fn broadcast_buffer_is_not_changed_for_other_peers() {
        let g = InMemoryMesh::group(3, opts(2000));
        let mut it = g.into_iter();
        let mut cheat = TamperMesh::new(it.next().unwrap());
        let c = cheat.add(Select::to(2).replace(&99u32));
        let (mut p1, mut p2) = (it.next().unwrap(), it.next().unwrap());
        cheat.broadcast_tagged(3, &5u32).await.unwrap();
        assert_eq!(p1.recv_tagged::<u32>(0, 3).await.unwrap(), 5);
        assert_eq!(p2.recv_tagged::<u32>(0, 3).await.unwrap(), 99);
        assert_eq!((c.matched(), c.fired()), (1, 1));
        for m in [cheat.close().await, p1.close().await, p2.close().await] {
            m.unwrap();
        }
    }

    #[tokio::test]
    async fn typed_rewrite_of_wrong_type_is_an_error() {
        let g = InMemoryMesh::group(2, opts(2000));
        let mut it = g.into_iter();
        let mut cheat = TamperMesh::new(it.next().unwrap());
        cheat.add(Select::any().rewrite(|v: &mut (u64, u64, u64, u64)| v.0 += 1));
        let e = cheat.send_bytes(1, 0, &[1, 2]).await.unwrap_err();
        assert!(matches!(e, Error::Encode(_)), "{e}");
        // the same rule on a Blob works
        cheat.clear_rules();
        cheat.add(Select::any().rewrite(|b: &mut Blob| b.0.push(3)));
        cheat.send_bytes(1, 0, &[1, 2]).await.unwrap();
        let mut p1 = it.next().unwrap();
        assert_eq!(p1.recv_bytes(0, 0).await.unwrap(), vec![1, 2, 3]);
        cheat.close().await.unwrap();
        p1.close().await.unwrap();
    }
}
