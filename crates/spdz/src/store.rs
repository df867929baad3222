//! The per-party on-disk preprocessing store: typed, append-only, with a durable consumption
//! cursor.
//!
//! Layout of a store directory (one per party and ring); every small file is a coterie-base
//! envelope:
//!
//! * `header.bin`: [`StoreHeader`] (ring, party, number of parties and a BLAKE3 fingerprint of
//!   the MAC key share), tag `SPDh`;
//! * `key.bin`: the MAC key share (tag `SPDk`, mode 0600 on Unix);
//! * `<kind>.dat`: fixed-width records of one [`Kind`] (`triples`, `bits`, `randoms`,
//!   `input-masks-<owner>`, `matrix-triples-<d>`; the width comes from the kind's row of
//!   [`crate::kind::KINDS`]), appended and fsynced, never rewritten;
//! * `<kind>.cursor`: how many records of the kind have been handed out, a durable counter
//!   ([`coterie_base::fsio::write_counter`]: two checksummed slots overwritten in place and
//!   synced, so a torn write leaves the previous value; stores written before 2026-11-26 hold an
//!   envelope of the `u64` (tag `SPDc`), read as such and converted at the next take).
//!
//! **Exactly-once consumption.** [`PrepStore`] moves the cursor past the records and makes that
//! durable *before* it reads and hands them out. A crash between the two loses those records
//! (they are never used), but never hands a record out twice. Reading past the end is
//! [`Error::Exhausted`]. A store made for another ring, party, number of parties or MAC key is
//! refused, and material made under another MAC key cannot be appended. Every kind, matrix
//! triples included, goes through the same code.
//!
//! # Example
//!
//! ```
//! use coterie_spdz::{InsecureDealer, Kind, Order, PrepStore, Preprocessing, Z2k};
//! let dir = coterie_base::fsio::unique_temp_dir("coterie-spdz-doc-store");
//! let ring = Z2k::spdz2k_64();
//! let mut rng = rand::rng();
//! let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
//! let mut preps = dealer.empty();
//! let order = Order::new().with(Kind::Triples, 4).with(Kind::MatrixTriples(2), 2);
//! dealer.fill_order(&mut preps, &order, &mut rng).unwrap();
//! let store = PrepStore::create(&dir, ring, 0, 2, preps[0].mac_key_share()).unwrap();
//! store.append(&mut preps[0]).unwrap();
//! drop(store);
//! let mut store = PrepStore::open(&dir, ring, 0, 2).unwrap();
//! assert_eq!(store.triples(3).unwrap().len(), 3);
//! assert_eq!(store.matrix_triples(2, 1).unwrap()[0].a.len(), 4);
//! assert_eq!(store.available(Kind::MatrixTriples(2)).unwrap(), 1);
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use coterie_base::envelope;
use coterie_base::fsio::{
    read_bounded, read_counter, sync_dir, write_atomic, write_atomic_private, write_counter,
};
use coterie_net::PartyId;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use crate::kind::Kind;
use crate::prep::{InputMask, MatrixTriple, Preprocessing, Share, Triple, VecPrep};
use crate::ring::{Ring, RingDescriptor};
use crate::{Error, Result};

/// Largest accepted header payload (bytes); the header of a 4096-bit prime field is about 600.
const MAX_HEADER: usize = 64 << 10;
/// Envelope tag of the key file.
const KEY_TAG: [u8; 4] = *b"SPDk";
/// Envelope tag of a cursor file.
const CURSOR_TAG: [u8; 4] = *b"SPDc";
/// Format version of the key and cursor files.
const FILE_VERSION: u16 = 1;

/// The header of a store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreHeader {
    /// The ring of the material.
    pub ring: RingDescriptor,
    /// The party that owns the material.
    pub party: PartyId,
    /// Number of parties.
    pub n: usize,
    /// BLAKE3 fingerprint of the MAC key share.
    pub key_fingerprint: [u8; 32],
}

coterie_base::versioned! {
    StoreHeader => b"SPDh" v 1,
}

fn fingerprint<R: Ring>(ring: &R, key: &R::Elem) -> [u8; 32] {
    let mut b = Vec::new();
    ring.write(key, &mut b);
    let f = blake3::derive_key("coterie-spdz 2026 store key fingerprint v1", &b);
    b.zeroize();
    f
}

fn not_found(e: &Error) -> bool {
    matches!(e, Error::Base(coterie_base::Error::Io { source, .. })
        if source.kind() == std::io::ErrorKind::NotFound)
}

/// A party's preprocessing store on disk (see the module docs).
pub struct PrepStore<R: Ring> {
    dir: PathBuf,
    ring: R,
    party: PartyId,
    n: usize,
    key: R::Elem,
}

impl<R: Ring> Drop for PrepStore<R> {
    fn drop(&mut self) {
        self.key.zeroize();
    }
}

impl<R: Ring> PrepStore<R> {
    /// Creates an empty store in `dir` (created if missing; must not hold a store yet).
    ///
    /// # Example
    ///
    /// ```
    /// use coterie_spdz::{Counts, InsecureDealer, Kind, PrepStore, Preprocessing, Fp64};
    /// let dir = coterie_base::fsio::unique_temp_dir("coterie-spdz-doc-create");
    /// let ring = Fp64::mersenne61();
    /// let mut rng = rand::rng();
    /// let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    /// let mut preps = dealer.deal(Counts { randoms: 3, ..Counts::default() }, &mut rng);
    /// let store = PrepStore::create(&dir, ring, 1, 2, preps[1].mac_key_share()).unwrap();
    /// store.append(&mut preps[1]).unwrap(); // fsynced
    /// assert!(store.append(&mut preps[0]).is_err()); // another party's material
    /// drop(store);
    /// let mut store = PrepStore::open(&dir, ring, 1, 2).unwrap();
    /// store.randoms(1).unwrap(); // marked used durably, then read
    /// assert_eq!((store.consumed(Kind::Randoms).unwrap(), store.available(Kind::Randoms).unwrap()), (1, 2));
    /// assert!(PrepStore::open(&dir, ring, 0, 2).is_err()); // not party 0's store
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn create(dir: &Path, ring: R, party: PartyId, n: usize, key: R::Elem) -> Result<Self> {
        if party >= n {
            return Err(Error::Invalid(format!("party {party} of {n}")));
        }
        fs::create_dir_all(dir)?;
        if dir.join("header.bin").exists() {
            return Err(Error::Store(format!(
                "{} already holds a store",
                dir.display()
            )));
        }
        let header = StoreHeader {
            ring: ring.descriptor(),
            party,
            n,
            key_fingerprint: fingerprint(&ring, &key),
        };
        let mut kb = Vec::new();
        ring.write(&key, &mut kb);
        let mut sealed = envelope::seal_bytes(KEY_TAG, FILE_VERSION, &kb)?;
        kb.zeroize();
        let written = write_atomic_private(&dir.join("key.bin"), &sealed);
        sealed.zeroize();
        written?;
        write_atomic(&dir.join("header.bin"), &envelope::to_envelope(&header)?)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            ring,
            party,
            n,
            key,
        })
    }

    /// Opens the store in `dir`, which must have been made for `ring`, `party` and `n`
    /// parties, with an intact MAC key share.
    pub fn open(dir: &Path, ring: R, party: PartyId, n: usize) -> Result<Self> {
        let hb = read_bounded(
            &dir.join("header.bin"),
            (MAX_HEADER + envelope::HEADER_LEN) as u64,
        )?;
        let h: StoreHeader = envelope::from_envelope(&hb, MAX_HEADER)
            .map_err(|e| Error::Store(format!("unreadable header: {e}")))?;
        if h.ring != ring.descriptor() {
            return Err(Error::Store(format!(
                "store is for ring {:?}, not {:?}",
                h.ring,
                ring.descriptor()
            )));
        }
        if h.party != party || h.n != n {
            return Err(Error::Store(format!(
                "store is for party {} of {}, not party {party} of {n}",
                h.party, h.n
            )));
        }
        let eb = ring.elem_bytes();
        let mut kb = read_bounded(&dir.join("key.bin"), (eb + envelope::HEADER_LEN) as u64)?;
        let key = envelope::open_bytes(KEY_TAG, FILE_VERSION, &kb, eb)
            .map_err(|e| Error::Store(format!("key: {e}")))
            .and_then(|b| ring.read(b).map_err(|e| Error::Store(format!("key: {e}"))));
        kb.zeroize();
        let key = key?;
        if fingerprint(&ring, &key) != h.key_fingerprint {
            return Err(Error::Store(
                "MAC key share does not match the header".into(),
            ));
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            ring,
            party,
            n,
            key,
        })
    }

    /// Opens the store and also requires its MAC key share to be `key`.
    pub fn open_with_key(
        dir: &Path,
        ring: R,
        party: PartyId,
        n: usize,
        key: &R::Elem,
    ) -> Result<Self> {
        let s = Self::open(dir, ring, party, n)?;
        if fingerprint(&s.ring, key) != fingerprint(&s.ring, &s.key) {
            return Err(Error::Store("store was made under another MAC key".into()));
        }
        Ok(s)
    }

    fn record_bytes(&self, kind: Kind) -> u64 {
        (kind.elems_per_item(self.party) * self.ring.elem_bytes()) as u64
    }
    fn data_path(&self, kind: Kind) -> PathBuf {
        self.dir.join(format!("{kind}.dat"))
    }
    fn cursor_path(&self, kind: Kind) -> PathBuf {
        self.dir.join(format!("{kind}.cursor"))
    }

    /// Number of complete records of `kind` on disk (a torn tail from a crash during an append
    /// is not counted).
    pub fn total(&self, kind: Kind) -> Result<u64> {
        kind.validate(self.n)?;
        match fs::metadata(self.data_path(kind)) {
            Ok(m) => Ok(m.len() / self.record_bytes(kind)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(e.into()),
        }
    }

    /// Number of records of `kind` handed out so far (durable).
    pub fn consumed(&self, kind: Kind) -> Result<u64> {
        kind.validate(self.n)?;
        let p = self.cursor_path(kind);
        if let Some(c) = read_counter(&p)? {
            return Ok(c);
        }
        // the format before durable counters (2026-11-26): an envelope of the u64
        let b = match read_bounded(&p, (8 + envelope::HEADER_LEN) as u64) {
            Ok(b) => b,
            Err(e) => {
                let e = Error::from(e);
                return if not_found(&e) { Ok(0) } else { Err(e) };
            }
        };
        let c = envelope::open_bytes(CURSOR_TAG, FILE_VERSION, &b, 8)
            .ok()
            .and_then(|c| <[u8; 8]>::try_from(c).ok())
            .ok_or_else(|| Error::Store(format!("corrupt cursor {}", p.display())))?;
        Ok(u64::from_le_bytes(c))
    }

    /// Records of `kind` still available.
    pub fn available(&self, kind: Kind) -> Result<u64> {
        Ok(self.total(kind)?.saturating_sub(self.consumed(kind)?))
    }

    /// Appends `elems` (whole records of `kind`) to the kind's data file, durably.
    fn append_records(&self, kind: Kind, elems: &[R::Elem]) -> Result<()> {
        if elems.is_empty() {
            return Ok(());
        }
        let rec = self.record_bytes(kind);
        let complete = self.total(kind)? * rec;
        let path = self.data_path(kind);
        let mut f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        // drop a torn tail left by a crash during an earlier append
        f.set_len(complete)?;
        f.seek(SeekFrom::Start(complete))?;
        let mut bytes = self.ring.encode(elems);
        f.write_all(&bytes)?;
        bytes.zeroize();
        f.sync_all()?;
        Ok(sync_dir(&self.dir)?)
    }

    /// Appends all material of `batch` (which must be this store's ring, party, number of
    /// parties and MAC key share), draining it. Every kind is laid out as its shared elements
    /// `(v, m)` in order, then the owner's clear elements.
    pub fn append(&self, batch: &mut VecPrep<R>) -> Result<()> {
        if batch.ring().descriptor() != self.ring.descriptor()
            || batch.party() != self.party
            || batch.n() != self.n
        {
            return Err(Error::Store("material for another ring or party".into()));
        }
        if fingerprint(&self.ring, &batch.mac_key_share()) != fingerprint(&self.ring, &self.key) {
            return Err(Error::Store("material made under another MAC key".into()));
        }
        fn push<E: Clone + Zeroize>(el: &mut Vec<E>, s: &Share<E>) {
            el.push(s.v.clone());
            el.push(s.m.clone());
        }
        let mut el = Vec::new();
        for t in batch.triples.drain(..) {
            for s in [&t.a, &t.b, &t.c] {
                push(&mut el, s);
            }
        }
        self.append_records(Kind::Triples, &el)?;
        el.zeroize();
        for s in batch.bits.drain(..) {
            push(&mut el, &s);
        }
        self.append_records(Kind::Bits, &el)?;
        el.zeroize();
        for s in batch.randoms.drain(..) {
            push(&mut el, &s);
        }
        self.append_records(Kind::Randoms, &el)?;
        el.zeroize();
        for owner in 0..self.n {
            for m in batch.masks[owner].drain(..) {
                push(&mut el, &m.share);
                if owner == self.party {
                    el.push(
                        m.value.clone().ok_or_else(|| {
                            Error::Store("own input mask without its value".into())
                        })?,
                    );
                }
            }
            self.append_records(Kind::InputMasks(owner), &el)?;
            el.zeroize();
        }
        for (d, q) in batch.matrix_triples.iter_mut() {
            let kind = Kind::MatrixTriples(*d);
            kind.validate(self.n)?;
            for t in q.drain(..) {
                if t.d != *d || t.a.len() != d * d || t.b.len() != d * d || t.c.len() != d * d {
                    el.zeroize();
                    return Err(Error::Invalid(format!(
                        "a matrix triple that is not {d}x{d}"
                    )));
                }
                for s in t.shares() {
                    push(&mut el, s);
                }
            }
            self.append_records(kind, &el)?;
            el.zeroize();
        }
        Ok(())
    }

    /// Marks `count` records of `kind` used (durably), then reads them; `after_mark` runs in
    /// between (tests use it to crash there).
    fn take_with(
        &mut self,
        kind: Kind,
        count: usize,
        after_mark: impl FnOnce(),
    ) -> Result<Vec<R::Elem>> {
        let c = self.consumed(kind)?;
        let total = self.total(kind)?;
        let avail = total.saturating_sub(c);
        if count as u64 > avail {
            return Err(Error::Exhausted {
                kind: kind.to_string(),
                wanted: count as u64,
                available: avail,
            });
        }
        if count == 0 {
            return Ok(Vec::new());
        }
        write_counter(&self.cursor_path(kind), c + count as u64)?;
        after_mark();
        let rec = self.record_bytes(kind);
        let mut f = File::open(self.data_path(kind))?;
        f.seek(SeekFrom::Start(c * rec))?;
        let mut buf = vec![0u8; count * rec as usize];
        f.read_exact(&mut buf)?;
        let per = kind.elems_per_item(self.party);
        let out = self
            .ring
            .decode(&buf, count * per)
            .map_err(|e| Error::Store(format!("corrupt {kind} record: {e}")));
        buf.zeroize();
        out
    }

    #[cfg(test)]
    pub(crate) fn take_then<F: FnOnce()>(
        &mut self,
        kind: Kind,
        count: usize,
        f: F,
    ) -> Result<Vec<R::Elem>> {
        self.take_with(kind, count, f)
    }

    /// `count` items of `kind` as their shared elements (`shared_per_item` shares per item,
    /// the owner's clear elements dropped), consumed durably before they are read.
    pub fn take_shares(&mut self, kind: Kind, count: usize) -> Result<Vec<Share<R::Elem>>> {
        let per = kind.elems_per_item(self.party);
        let shared = kind.shared_per_item();
        let el = self.take_with(kind, count, || ())?;
        let mut out = Vec::with_capacity(count * shared);
        for rec in el.chunks_exact(per) {
            for s in rec[..2 * shared].chunks_exact(2) {
                out.push(Share {
                    v: s[0].clone(),
                    m: s[1].clone(),
                });
            }
        }
        Ok(out)
    }
}

impl<R: Ring> Preprocessing<R> for PrepStore<R> {
    fn ring(&self) -> &R {
        &self.ring
    }
    fn party(&self) -> PartyId {
        self.party
    }
    fn n(&self) -> usize {
        self.n
    }
    fn mac_key_share(&self) -> R::Elem {
        self.key.clone()
    }
    fn triples(&mut self, count: usize) -> Result<Vec<Triple<R::Elem>>> {
        let s = self.take_shares(Kind::Triples, count)?;
        Ok(s.chunks_exact(3)
            .map(|c| Triple {
                a: c[0].clone(),
                b: c[1].clone(),
                c: c[2].clone(),
            })
            .collect())
    }
    fn bits(&mut self, count: usize) -> Result<Vec<Share<R::Elem>>> {
        self.take_shares(Kind::Bits, count)
    }
    fn randoms(&mut self, count: usize) -> Result<Vec<Share<R::Elem>>> {
        self.take_shares(Kind::Randoms, count)
    }
    fn input_masks(&mut self, owner: PartyId, count: usize) -> Result<Vec<InputMask<R::Elem>>> {
        if owner >= self.n {
            return Err(Error::Invalid(format!("no party {owner}")));
        }
        let kind = Kind::InputMasks(owner);
        let per = kind.elems_per_item(self.party);
        let el = self.take_with(kind, count, || ())?;
        Ok(el
            .chunks_exact(per)
            .map(|c| InputMask {
                share: Share {
                    v: c[0].clone(),
                    m: c[1].clone(),
                },
                value: (per == 3).then(|| c[2].clone()),
            })
            .collect())
    }
    fn matrix_triples(&mut self, d: usize, count: usize) -> Result<Vec<MatrixTriple<R::Elem>>> {
        let kind = Kind::MatrixTriples(d);
        kind.validate(self.n)?;
        let per = kind.shared_per_item();
        let s = self.take_shares(kind, count)?;
        s.chunks_exact(per)
            .map(|c| MatrixTriple::from_shares(d, c))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prep::{Counts, InsecureDealer};
    use crate::producer::Order;
    use crate::ring::{Fp64, Z2k};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    struct TempDir(PathBuf);
    impl TempDir {
        fn new(tag: &str) -> Self {
            Self(coterie_base::fsio::unique_temp_dir(&format!(
                "coterie-spdz-{tag}"
            )))
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn material(n: usize, seed: u64) -> Vec<VecPrep<Z2k>> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let d = InsecureDealer::insecure_new(Z2k::spdz2k_64(), n, &mut rng).unwrap();
        d.deal(
            Counts {
                triples: 5,
                bits: 7,
                randoms: 10,
                masks_per_party: 3,
            },
            &mut rng,
        )
    }

    #[test]
    fn round_trip_and_exhaustion() {
        let t = TempDir::new("rt");
        let mut preps = material(3, 1);
        let orig = preps[1].clone();
        let ring = Z2k::spdz2k_64();
        let s = PrepStore::create(&t.0, ring, 1, 3, preps[1].mac_key_share()).unwrap();
        s.append(&mut preps[1]).unwrap();
        assert!(preps[1].triples.is_empty());
        drop(s);
        let mut s = PrepStore::open(&t.0, ring, 1, 3).unwrap();
        assert_eq!(s.mac_key_share(), orig.mac_key_share());
        let tr = s.triples(5).unwrap();
        assert_eq!(tr, orig.triples.iter().cloned().collect::<Vec<_>>());
        assert_eq!(
            s.bits(7).unwrap(),
            orig.bits.iter().cloned().collect::<Vec<_>>()
        );
        let own = s.input_masks(1, 3).unwrap();
        assert_eq!(own, orig.masks[1].iter().cloned().collect::<Vec<_>>());
        assert!(own.iter().all(|m| m.value.is_some()));
        let other = s.input_masks(2, 3).unwrap();
        assert_eq!(other, orig.masks[2].iter().cloned().collect::<Vec<_>>());
        assert!(other.iter().all(|m| m.value.is_none()));
        match s.triples(1) {
            Err(Error::Exhausted {
                wanted, available, ..
            }) => assert_eq!((wanted, available), (1, 0)),
            other => panic!("{other:?}"),
        }
        // appending more extends the same kind
        let mut more = material(3, 1);
        s.append(&mut more[1]).unwrap();
        assert_eq!(s.available(Kind::Triples).unwrap(), 5);
        assert_eq!(s.consumed(Kind::Triples).unwrap(), 5);
    }

    #[test]
    fn refuses_other_ring_party_and_key() {
        let t = TempDir::new("refuse");
        let mut preps = material(2, 2);
        let ring = Z2k::spdz2k_64();
        let s = PrepStore::create(&t.0, ring, 0, 2, preps[0].mac_key_share()).unwrap();
        // material of party 1, and of another MAC key
        assert!(matches!(s.append(&mut preps[1]), Err(Error::Store(_))));
        let mut other = material(2, 3);
        assert!(matches!(s.append(&mut other[0]), Err(Error::Store(_))));
        s.append(&mut preps[0]).unwrap();
        drop(s);
        assert!(matches!(
            PrepStore::open(&t.0, Z2k::spdz2k_32(), 0, 2),
            Err(Error::Store(_))
        ));
        assert!(matches!(
            PrepStore::open(&t.0, Fp64::mersenne61(), 0, 2),
            Err(Error::Store(_))
        ));
        assert!(matches!(
            PrepStore::open(&t.0, ring, 1, 2),
            Err(Error::Store(_))
        ));
        assert!(matches!(
            PrepStore::open(&t.0, ring, 0, 3),
            Err(Error::Store(_))
        ));
        assert!(matches!(
            PrepStore::open_with_key(&t.0, ring, 0, 2, &other[0].mac_key_share()),
            Err(Error::Store(_))
        ));
        assert!(PrepStore::open_with_key(&t.0, ring, 0, 2, &preps[0].mac_key_share()).is_ok());
        assert!(matches!(
            PrepStore::create(&t.0, ring, 0, 2, preps[0].mac_key_share()),
            Err(Error::Store(_))
        ));
        // a tampered key file is refused
        let mut kb = fs::read(t.0.join("key.bin")).unwrap();
        kb[0] ^= 1;
        fs::write(t.0.join("key.bin"), kb).unwrap();
        assert!(matches!(
            PrepStore::open(&t.0, ring, 0, 2),
            Err(Error::Store(_))
        ));
    }

    #[test]
    fn torn_append_tail_is_ignored() {
        let t = TempDir::new("torn");
        let mut preps = material(2, 4);
        let orig = preps[0].clone();
        let ring = Z2k::spdz2k_64();
        let s = PrepStore::create(&t.0, ring, 0, 2, preps[0].mac_key_share()).unwrap();
        s.append(&mut preps[0]).unwrap();
        let mut f = OpenOptions::new()
            .append(true)
            .open(s.data_path(Kind::Randoms))
            .unwrap();
        f.write_all(&[7u8; 5]).unwrap();
        drop(f);
        assert_eq!(s.total(Kind::Randoms).unwrap(), 10);
        let mut more = material(2, 4);
        s.append(&mut more[0]).unwrap();
        let mut s = s;
        let got = s.randoms(20).unwrap();
        let want: Vec<_> = orig
            .randoms
            .iter()
            .chain(orig.randoms.iter())
            .cloned()
            .collect();
        assert_eq!(got, want);
    }

    const CRASH_ENV: &str = "COTERIE_SPDZ_CRASH_DIR";
    const CRASH_KIND_ENV: &str = "COTERIE_SPDZ_CRASH_MATRIX_D";

    /// Child half of `crash_between_mark_and_use_never_reuses` (and of the matrix-triple
    /// version): marks 3 random values (or 3 matrix triples of the given `d`) used and is killed
    /// (abort) before it reads them. Does nothing when run on its own.
    #[test]
    #[ignore]
    fn crash_child() {
        if let Ok(dir) = std::env::var(CRASH_ENV) {
            let kind = match std::env::var(CRASH_KIND_ENV) {
                Ok(d) => Kind::MatrixTriples(d.parse().unwrap()),
                Err(_) => Kind::Randoms,
            };
            let mut s = PrepStore::open(Path::new(&dir), Z2k::spdz2k_64(), 0, 2).unwrap();
            let _ = s.take_then(kind, 3, || std::process::abort());
            unreachable!("the child must have been killed after marking");
        }
    }

    fn run_crash_child(dir: &Path, matrix_d: Option<usize>) {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "--exact",
            "store::tests::crash_child",
            "--ignored",
            "--nocapture",
        ])
        .env(CRASH_ENV, dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
        if let Some(d) = matrix_d {
            cmd.env(CRASH_KIND_ENV, d.to_string());
        }
        let status = cmd.status().unwrap();
        assert!(!status.success(), "the child was to be killed");
    }

    /// Matrix triples go through the store like every other kind: written, taken, a restart
    /// keeps the cursor, a crash between marking and use loses (never reuses) the marked ones.
    #[test]
    fn matrix_triples_write_take_restart_crash_no_reuse() {
        let t = TempDir::new("matrix");
        let ring = Z2k::spdz2k_64();
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let d = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
        let mut preps = d.empty();
        let order = Order::new()
            .with(Kind::MatrixTriples(3), 8)
            .with(Kind::MatrixTriples(1), 2)
            .with(Kind::Triples, 1);
        d.fill_order(&mut preps, &order, &mut rng).unwrap();
        crate::verify::verify_material(&preps).unwrap();
        let orig: Vec<MatrixTriple<u128>> = preps[0].matrix_triples[&3].iter().cloned().collect();
        let mut s = PrepStore::create(&t.0, ring, 0, 2, preps[0].mac_key_share()).unwrap();
        s.append(&mut preps[0]).unwrap();
        assert!(preps[0].matrix_triples[&3].is_empty());
        assert_eq!(s.available(Kind::MatrixTriples(3)).unwrap(), 8);
        assert_eq!(s.available(Kind::MatrixTriples(1)).unwrap(), 2);
        assert_eq!(s.available(Kind::MatrixTriples(2)).unwrap(), 0);
        assert!(s.total(Kind::MatrixTriples(0)).is_err());
        // take 2, restart: the cursor survives and the next ones follow
        assert_eq!(s.matrix_triples(3, 2).unwrap(), orig[..2]);
        drop(s);
        let s = PrepStore::open(&t.0, ring, 0, 2).unwrap();
        assert_eq!(s.consumed(Kind::MatrixTriples(3)).unwrap(), 2);
        drop(s);
        // crash after marking 3 more: they are lost, never handed out
        run_crash_child(&t.0, Some(3));
        let mut s = PrepStore::open(&t.0, ring, 0, 2).unwrap();
        assert_eq!(s.consumed(Kind::MatrixTriples(3)).unwrap(), 5);
        let rest = s.matrix_triples(3, 3).unwrap();
        assert_eq!(rest, orig[5..]);
        for r in &rest {
            assert!(!orig[..5].contains(r));
        }
        assert!(matches!(
            s.matrix_triples(3, 1),
            Err(Error::Exhausted { .. })
        ));
        // the other dimension and kind are untouched
        assert_eq!(s.matrix_triples(1, 2).unwrap().len(), 2);
        assert_eq!(s.triples(1).unwrap().len(), 1);
    }

    /// Kill a party between marking and using material, restart it, and show nothing is reused.
    #[test]
    fn crash_between_mark_and_use_never_reuses() {
        let t = TempDir::new("crash");
        let mut preps = material(2, 5);
        let orig: Vec<_> = preps[0].randoms.iter().cloned().collect();
        let ring = Z2k::spdz2k_64();
        let mut s = PrepStore::create(&t.0, ring, 0, 2, preps[0].mac_key_share()).unwrap();
        s.append(&mut preps[0]).unwrap();
        let first = s.randoms(2).unwrap();
        assert_eq!(first, orig[..2]);
        drop(s);
        run_crash_child(&t.0, None);
        let mut s = PrepStore::open(&t.0, ring, 0, 2).unwrap();
        assert_eq!(s.consumed(Kind::Randoms).unwrap(), 5);
        let rest = s.randoms(5).unwrap();
        assert_eq!(rest, orig[5..]);
        for r in &rest {
            assert!(!orig[..5].contains(r));
        }
        assert!(matches!(s.randoms(1), Err(Error::Exhausted { .. })));
    }
}
