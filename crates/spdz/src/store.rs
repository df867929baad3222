//! The per-party on-disk preprocessing store: typed, append-only, with a durable consumption
//! cursor.
//!
//! Layout of a store directory (one per party and ring):
//!
//! * `header.bin`: postcard [`StoreHeader`] (format version, ring, party, number of parties and a
//!   BLAKE3 fingerprint of the MAC key share);
//! * `key.bin`: the MAC key share (mode 0600 on Unix);
//! * `<kind>.dat`: fixed-width records of one kind (`triples`, `bits`, `randoms`,
//!   `input-masks-<owner>`), appended and fsynced, never rewritten;
//! * `<kind>.cursor`: how many records of the kind have been handed out, replaced atomically
//!   (write to a temporary file, fsync, rename, fsync the directory).
//!
//! **Exactly-once consumption.** [`PrepStore`] moves the cursor past the records and makes that
//! durable *before* it reads and hands them out. A crash between the two loses those records
//! (they are never used), but never hands a record out twice. Reading past the end is
//! [`Error::Exhausted`]. A store made for another ring, party, number of parties or MAC key is
//! refused, and material made under another MAC key cannot be appended.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use coterie_net::PartyId;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use crate::prep::{InputMask, Kind, Preprocessing, Share, Triple, VecPrep};
use crate::ring::{Ring, RingDescriptor};
use crate::{Error, Result};

/// Format version of the store files.
pub const STORE_VERSION: u32 = 1;
const CURSOR_MAGIC: &[u8; 8] = b"CTRSPDZC";
/// Largest accepted header file (bytes); the header of a 4096-bit prime field is about 600.
const MAX_HEADER: u64 = 64 << 10;

/// The header of a store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreHeader {
    /// [`STORE_VERSION`].
    pub version: u32,
    /// The ring of the material.
    pub ring: RingDescriptor,
    /// The party that owns the material.
    pub party: PartyId,
    /// Number of parties.
    pub n: usize,
    /// BLAKE3 fingerprint of the MAC key share.
    pub key_fingerprint: [u8; 32],
}

fn fingerprint<R: Ring>(ring: &R, key: &R::Elem) -> [u8; 32] {
    let mut b = Vec::new();
    ring.write(key, &mut b);
    let f = blake3::derive_key("coterie-spdz 2026 store key fingerprint v1", &b);
    b.zeroize();
    f
}

fn kind_name(k: Kind) -> String {
    k.to_string()
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

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)?.sync_all()?;
    Ok(())
}

fn write_atomic(dir: &Path, name: &str, bytes: &[u8], secret: bool) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let mut o = OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = secret;
    let mut f = o.open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    fs::rename(&tmp, dir.join(name))?;
    sync_dir(dir)
}

fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>> {
    let f = File::open(path)?;
    let len = f.metadata()?.len();
    if len > max {
        return Err(Error::Store(format!(
            "{} is {len} bytes, over the limit of {max}",
            path.display()
        )));
    }
    let mut b = Vec::with_capacity(len as usize);
    f.take(max).read_to_end(&mut b)?;
    Ok(b)
}

impl<R: Ring> PrepStore<R> {
    /// Creates an empty store in `dir` (created if missing; must not hold a store yet).
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
            version: STORE_VERSION,
            ring: ring.descriptor(),
            party,
            n,
            key_fingerprint: fingerprint(&ring, &key),
        };
        let mut kb = Vec::new();
        ring.write(&key, &mut kb);
        write_atomic(dir, "key.bin", &kb, true)?;
        kb.zeroize();
        let hb = postcard::to_allocvec(&header).map_err(|e| Error::Codec(e.to_string()))?;
        write_atomic(dir, "header.bin", &hb, false)?;
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
        let hb = read_bounded(&dir.join("header.bin"), MAX_HEADER)?;
        let h: StoreHeader = postcard::from_bytes(&hb)
            .map_err(|e| Error::Store(format!("unreadable header: {e}")))?;
        if h.version != STORE_VERSION {
            return Err(Error::Store(format!("store format version {}", h.version)));
        }
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
        let mut kb = read_bounded(&dir.join("key.bin"), ring.elem_bytes() as u64)?;
        let key = ring
            .read(&kb)
            .map_err(|e| Error::Store(format!("key: {e}")))?;
        kb.zeroize();
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

    fn elems_per_record(&self, kind: Kind) -> usize {
        match kind {
            Kind::Triples => 6,
            Kind::Bits | Kind::Randoms => 2,
            Kind::InputMasks(o) if o == self.party => 3,
            Kind::InputMasks(_) => 2,
        }
    }
    fn record_bytes(&self, kind: Kind) -> u64 {
        (self.elems_per_record(kind) * self.ring.elem_bytes()) as u64
    }
    fn data_path(&self, kind: Kind) -> PathBuf {
        self.dir.join(format!("{}.dat", kind_name(kind)))
    }
    fn cursor_name(kind: Kind) -> String {
        format!("{}.cursor", kind_name(kind))
    }

    /// Number of complete records of `kind` on disk (a torn tail from a crash during an append
    /// is not counted).
    pub fn total(&self, kind: Kind) -> Result<u64> {
        match fs::metadata(self.data_path(kind)) {
            Ok(m) => Ok(m.len() / self.record_bytes(kind)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(e.into()),
        }
    }

    /// Number of records of `kind` handed out so far (durable).
    pub fn consumed(&self, kind: Kind) -> Result<u64> {
        let p = self.dir.join(Self::cursor_name(kind));
        let b = match read_bounded(&p, 16) {
            Ok(b) => b,
            Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        if b.len() != 16 || &b[..8] != CURSOR_MAGIC {
            return Err(Error::Store(format!("corrupt cursor {}", p.display())));
        }
        let mut c = [0u8; 8];
        c.copy_from_slice(&b[8..]);
        Ok(u64::from_le_bytes(c))
    }

    /// Records of `kind` still available.
    pub fn available(&self, kind: Kind) -> Result<u64> {
        Ok(self.total(kind)?.saturating_sub(self.consumed(kind)?))
    }

    fn append_records(&self, kind: Kind, elems: &[R::Elem]) -> Result<()> {
        let rec = self.record_bytes(kind);
        let complete = self.total(kind)? * rec;
        let mut f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.data_path(kind))?;
        // drop a torn tail left by a crash during an earlier append
        f.set_len(complete)?;
        f.seek(SeekFrom::Start(complete))?;
        let mut bytes = self.ring.encode(elems);
        f.write_all(&bytes)?;
        bytes.zeroize();
        f.sync_all()?;
        sync_dir(&self.dir)
    }

    /// Appends all material of `batch` (which must be this store's ring, party, number of
    /// parties and MAC key share), draining it.
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
        let mut el = Vec::new();
        for t in batch.triples.drain(..) {
            el.extend([t.a.v, t.a.m, t.b.v, t.b.m, t.c.v, t.c.m].iter().cloned());
        }
        self.append_records(Kind::Triples, &el)?;
        el.zeroize();
        let mut el: Vec<R::Elem> = batch
            .bits
            .drain(..)
            .flat_map(|s| [s.v.clone(), s.m.clone()])
            .collect();
        self.append_records(Kind::Bits, &el)?;
        el.zeroize();
        let mut el: Vec<R::Elem> = batch
            .randoms
            .drain(..)
            .flat_map(|s| [s.v.clone(), s.m.clone()])
            .collect();
        self.append_records(Kind::Randoms, &el)?;
        el.zeroize();
        for owner in 0..self.n {
            let mut el = Vec::new();
            for m in batch.masks[owner].drain(..) {
                el.push(m.share.v.clone());
                el.push(m.share.m.clone());
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
        let mut cb = Vec::with_capacity(16);
        cb.extend_from_slice(CURSOR_MAGIC);
        cb.extend_from_slice(&(c + count as u64).to_le_bytes());
        write_atomic(&self.dir, &Self::cursor_name(kind), &cb, false)?;
        after_mark();
        let rec = self.record_bytes(kind);
        let mut f = File::open(self.data_path(kind))?;
        f.seek(SeekFrom::Start(c * rec))?;
        let mut buf = vec![0u8; count * rec as usize];
        f.read_exact(&mut buf)?;
        let per = self.elems_per_record(kind);
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

    fn shares(&mut self, kind: Kind, count: usize) -> Result<Vec<Share<R::Elem>>> {
        let el = self.take_with(kind, count, || ())?;
        Ok(el
            .chunks_exact(2)
            .map(|c| Share {
                v: c[0].clone(),
                m: c[1].clone(),
            })
            .collect())
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
        let el = self.take_with(Kind::Triples, count, || ())?;
        Ok(el
            .chunks_exact(6)
            .map(|c| Triple {
                a: Share {
                    v: c[0].clone(),
                    m: c[1].clone(),
                },
                b: Share {
                    v: c[2].clone(),
                    m: c[3].clone(),
                },
                c: Share {
                    v: c[4].clone(),
                    m: c[5].clone(),
                },
            })
            .collect())
    }
    fn bits(&mut self, count: usize) -> Result<Vec<Share<R::Elem>>> {
        self.shares(Kind::Bits, count)
    }
    fn randoms(&mut self, count: usize) -> Result<Vec<Share<R::Elem>>> {
        self.shares(Kind::Randoms, count)
    }
    fn input_masks(&mut self, owner: PartyId, count: usize) -> Result<Vec<InputMask<R::Elem>>> {
        if owner >= self.n {
            return Err(Error::Invalid(format!("no party {owner}")));
        }
        let kind = Kind::InputMasks(owner);
        let per = self.elems_per_record(kind);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prep::{Counts, InsecureDealer};
    use crate::ring::{Fp64, Z2k};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    struct TempDir(PathBuf);
    impl TempDir {
        fn new(tag: &str) -> Self {
            let p = std::env::temp_dir().join(format!(
                "coterie-spdz-{tag}-{}-{}",
                std::process::id(),
                rand::random::<u64>()
            ));
            Self(p)
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

    /// Child half of `crash_between_mark_and_use_never_reuses`: marks 3 random values used and
    /// is killed (abort) before it reads them. Does nothing when run on its own.
    #[test]
    #[ignore]
    fn crash_child() {
        if let Ok(dir) = std::env::var(CRASH_ENV) {
            let mut s = PrepStore::open(Path::new(&dir), Z2k::spdz2k_64(), 0, 2).unwrap();
            let _ = s.take_then(Kind::Randoms, 3, || std::process::abort());
            unreachable!("the child must have been killed after marking");
        }
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
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "store::tests::crash_child",
                "--ignored",
                "--nocapture",
            ])
            .env(CRASH_ENV, &t.0)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(!status.success(), "the child was to be killed");
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
