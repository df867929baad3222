//! A per-party on-disk store of gate bundles with a durable consumption cursor: bundles are
//! handed out in id order, and the cursor is advanced on disk (written and synced) **before** a
//! bundle is returned, so a crash and restart never hands a bundle out twice
//! (seed 000 §4 "gates are single-use", §16 \[ENG\] preprocessing storage).
//!
//! Consumed bundles stay in their batch file until the whole batch is consumed (then the file
//! is deleted); the cursor, not the file contents, is what prevents reuse. Files are not
//! encrypted at rest.
//!
//! Layout of a store directory:
//! * `header.bin`: an envelope (`coterie_base::envelope`, tag `THgh`, version 3) holding
//!   `(k, l, b)` as `u8`s;
//! * `batch-<first id>.bin`: a batch of consecutive bundles (format below);
//! * `cursor.bin`: the id of the next bundle to hand out, a durable counter
//!   ([`coterie_base::fsio::write_counter`]: two checksummed slots overwritten in place; stores
//!   written before 2026-11-26 hold a little-endian `u64`, read as such and converted at the
//!   next take).
//!
//! Bundle batch format, version 3 (**down-cast**, seed 000 §10.2): an envelope
//! (`coterie_base::envelope`, tag `THgb`, version 3; version 2 had its own magic `b"CTGB"` and a
//! version byte) whose payload is `(k, l, b, s)` as `u8`s, first id `u64`, count `u32`, then a
//! little-endian bit stream: per
//! bundle and per gate (Sign gates, then the ModLTZ gate) the mask as `(v, m)` of `k+s` bits
//! each, then the table entries as `(v, m)` reduced to `d+1+s` bits (Sign) or `m+s` bits
//! (ModLTZ), i.e. [`stored_bits_per_bundle`] bits per bundle (346,880 for the tables with the
//! paper's parameters, plus 2,304 for the masks). Sizes are implied by the header; the decoder
//! checks the exact length before allocating. Down-cast bundles are for the per-value-check
//! schedules only (see [`GateBundle::downcast`]). [`GateStore::take`] hands the bits out as they
//! are ([`PackedBundles`], for a [`crate::gates::GatePool`]); [`decode_batch`] lifts them into
//! [`GateBundle`]s.

use std::fs;
use std::path::{Path, PathBuf};

use coterie_base::bits::{BitReader, BitWriter};
use coterie_spdz::Share;

use crate::gates::{Gate, GateBundle, PackedBundles, Sh};
use crate::params::LtParams;
use crate::{Error, Result};

/// Envelope tag of a bundle batch file.
const BATCH_TAG: [u8; 4] = *b"THgb";
/// Envelope tag of a store's `header.bin`.
const STORE_TAG: [u8; 4] = *b"THgh";
/// Format version of the batch files and of `header.bin` (3: the envelope replaced the
/// version-2 magic and version byte; the bit-packed payload is unchanged).
const VERSION: u16 = 3;
/// The MAC parameter `s` of the stored shares (coterie-spdz's SPDZ_2k rings use `s = 64`).
pub const STORE_S: u32 = 64;
/// Bytes of the batch payload before the bit stream: `(k, l, b, s)`, first id, count.
const PAYLOAD_HEADER: usize = 16;
/// Bytes of a batch file before the bit stream: the envelope header and [`PAYLOAD_HEADER`].
const HEADER: usize = coterie_base::envelope::HEADER_LEN + PAYLOAD_HEADER;
/// Largest batch file accepted (bytes).
pub const MAX_BATCH_BYTES: usize = 1 << 31;

fn io(e: std::io::Error) -> Error {
    Error::Gate(format!("store i/o: {e}"))
}

/// Stored bits of one bundle in the down-cast format (seed 000 §10.2–10.3), as
/// `(tables, masks)`: every Sign-table entry is a `(d+1)`-bit value kept as a `(d+1+s)`-bit share
/// and a `(d+1+s)`-bit MAC share, every ModLTZ entry an `m`-bit value (`m = k − l`; the entry `u`
/// is only used as `2^l·u`) kept as `(m+s) + (m+s)` bits; the `d+1` gate masks are kept whole
/// (`2(k+s)` bits each; the paper's count ignores them). For the paper's parameters the tables
/// take `2((d+1+s)((d−1)2^b + 2^{b'}) + (m+s)2^{d+1}) = 346,880` bits.
pub fn stored_bits_per_bundle(lt: &LtParams) -> (usize, usize) {
    let s = STORE_S as usize;
    let t = lt.d() as usize + 1 + s;
    let m = (lt.k - lt.l) as usize + s;
    let signs: usize = lt.sign_widths().iter().map(|&a| 1usize << a).sum();
    let tables = 2 * (t * signs + m * (1usize << (lt.d() + 1)));
    let masks = 2 * (lt.k as usize + s) * lt.gate_widths().len();
    (tables, masks)
}

/// Bytes of a batch file of `count` bundles: the envelope header, the payload header and the
/// bit-packed bundles.
pub fn batch_bytes(lt: &LtParams, count: usize) -> usize {
    let (t, m) = stored_bits_per_bundle(lt);
    HEADER + (count * (t + m)).div_ceil(8)
}

fn check_lt(lt: &LtParams) -> Result<()> {
    if lt.k + STORE_S > 128 {
        return Err(Error::Gate("k + s above 128 bits".into()));
    }
    Ok(())
}

/// Encodes consecutive bundles (ids `first, first + 1, ...`) in the down-cast format (module
/// docs): shares are reduced to their small moduli and bit-packed.
pub fn encode_batch(lt: &LtParams, bundles: &[GateBundle]) -> Result<Vec<u8>> {
    check_lt(lt)?;
    let first = bundles.first().map_or(0, |b| b.id);
    let count = u32::try_from(bundles.len())
        .map_err(|_| Error::Gate("more than 2^32 bundles in one batch".into()))?;
    let mut head = Vec::with_capacity(batch_bytes(lt, bundles.len()) - HEADER + PAYLOAD_HEADER);
    head.extend_from_slice(&[lt.k as u8, lt.l as u8, lt.b as u8, STORE_S as u8]);
    head.extend_from_slice(&first.to_le_bytes());
    head.extend_from_slice(&count.to_le_bytes());
    let mut w = BitWriter::with_capacity(batch_bytes(lt, bundles.len()) - HEADER);
    let full = lt.k + STORE_S;
    let sign_bits = lt.d() + 1 + STORE_S;
    let modltz_bits = lt.k - lt.l + STORE_S;
    for (j, b) in bundles.iter().enumerate() {
        b.check_shape(lt)?;
        if b.id != first + j as u64 {
            return Err(Error::Gate("a batch must hold consecutive ids".into()));
        }
        for (g, bits) in b
            .signs
            .iter()
            .map(|g| (g, sign_bits))
            .chain(std::iter::once((&b.modltz, modltz_bits)))
        {
            w.put_u128(g.mask.v, full);
            w.put_u128(g.mask.m, full);
            for e in &g.table {
                w.put_u128(e.v, bits);
                w.put_u128(e.m, bits);
            }
        }
    }
    head.extend_from_slice(&w.finish());
    coterie_base::envelope::seal_bytes(BATCH_TAG, VERSION, &head)
        .map_err(|e| Error::Gate(format!("bundle batch: {e}")))
}

/// Checks a batch file against `lt` and returns its first id, its count and its bit stream.
fn open_batch<'a>(lt: &LtParams, bytes: &'a [u8]) -> Result<(u64, usize, &'a [u8])> {
    let (first, count) = batch_header(lt, bytes, bytes.len())?;
    Ok((first, count, &bytes[HEADER..]))
}

/// Checks the first [`HEADER`] bytes of a batch file of `total` bytes against `lt` (envelope,
/// parameters, and the length the count implies) and returns its first id and its count.
fn batch_header(lt: &LtParams, head: &[u8], total: usize) -> Result<(u64, usize)> {
    check_lt(lt)?;
    let bad = |s: &str| Error::Gate(format!("bundle batch: {s}"));
    if head.len() < HEADER {
        return Err(bad("bad header"));
    }
    let (tag, version) = coterie_base::envelope::peek(head).map_err(|e| bad(&e.to_string()))?;
    if tag != BATCH_TAG {
        return Err(bad("not a bundle batch"));
    }
    if version != VERSION {
        return Err(bad(&format!(
            "format version {version}, this build reads version {VERSION}"
        )));
    }
    let len = u32::from_le_bytes([head[10], head[11], head[12], head[13]]) as usize;
    if len > MAX_BATCH_BYTES || Some(len) != total.checked_sub(coterie_base::envelope::HEADER_LEN) {
        return Err(bad("length does not match the envelope"));
    }
    let p = &head[coterie_base::envelope::HEADER_LEN..HEADER];
    if (
        u32::from(p[0]),
        u32::from(p[1]),
        u32::from(p[2]),
        u32::from(p[3]),
    ) != (lt.k, lt.l, lt.b, STORE_S)
    {
        return Err(bad("other parameters"));
    }
    let first = u64::from_le_bytes(p[4..12].try_into().map_err(|_| bad("id"))?);
    let count = u32::from_le_bytes(p[12..16].try_into().map_err(|_| bad("count"))?) as usize;
    if count > MAX_BATCH_BYTES || batch_bytes(lt, count) != total {
        return Err(bad("length does not match the count"));
    }
    Ok((first, count))
}

/// Decodes a batch written by [`encode_batch`], checking it against `lt`. The bundles come back
/// with [`GateBundle::downcast`] set (table entries lifted with zero high bits).
pub fn decode_batch(lt: &LtParams, bytes: &[u8]) -> Result<Vec<GateBundle>> {
    let (first, count, stream) = open_batch(lt, bytes)?;
    let bad = |s: &str| Error::Gate(format!("bundle batch: {s}"));
    let mut r = BitReader::new(stream);
    let full = lt.k + STORE_S;
    let sign_bits = lt.d() + 1 + STORE_S;
    let modltz_bits = lt.k - lt.l + STORE_S;
    let widths = lt.gate_widths();
    let mut out = Vec::with_capacity(count);
    for j in 0..count {
        let mut gates = Vec::with_capacity(widths.len());
        for (i, &a) in widths.iter().enumerate() {
            let bits = if i + 1 == widths.len() {
                modltz_bits
            } else {
                sign_bits
            };
            let mut get = |bits: u32| -> Result<Sh> {
                let v = r.get_u128(bits).ok_or_else(|| bad("truncated"))?;
                let m = r.get_u128(bits).ok_or_else(|| bad("truncated"))?;
                Ok(Share { v, m })
            };
            let mask = get(full)?;
            let table = (0..1usize << a)
                .map(|_| get(bits))
                .collect::<Result<Vec<_>>>()?;
            gates.push(Gate { mask, table });
        }
        let modltz = gates.pop().ok_or_else(|| bad("no gates"))?;
        out.push(GateBundle {
            id: first + j as u64,
            lt: *lt,
            signs: gates,
            modltz,
            downcast: true,
        });
    }
    Ok(out)
}

/// One party's gate store (see the module docs).
#[derive(Debug)]
pub struct GateStore {
    dir: PathBuf,
    lt: LtParams,
}

/// Consumed batch files handed to a cleanup thread and not deleted yet, in this process: every
/// listing leaves them out, so nothing reads a file while it goes (also a store opened again,
/// as a reconnecting node does, while an earlier handle's cleanup still runs).
static DOOMED: std::sync::LazyLock<std::sync::Mutex<std::collections::HashSet<PathBuf>>> =
    std::sync::LazyLock::new(Default::default);

fn doomed() -> std::sync::MutexGuard<'static, std::collections::HashSet<PathBuf>> {
    // a panic while the lock was held cannot leave the set inconsistent (inserts and removes)
    DOOMED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Atomic durable write (temp file, fsync, rename, fsync of the directory) through
/// `coterie_base::fsio`; a failure at any step, the directory fsync included, is an error.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    coterie_base::fsio::write_atomic(path, bytes)
        .map_err(|e| Error::Gate(format!("store i/o: {e}")))
}

/// Moves the durable cursor ([`coterie_base::fsio::write_counter`]).
fn write_cursor(path: &Path, id: u64) -> Result<()> {
    coterie_base::fsio::write_counter(path, id).map_err(|e| Error::Gate(format!("store i/o: {e}")))
}

/// The contents of `header.bin` for a store made for `lt`.
fn store_header(lt: &LtParams) -> Result<Vec<u8>> {
    coterie_base::envelope::seal_bytes(STORE_TAG, VERSION, &[lt.k as u8, lt.l as u8, lt.b as u8])
        .map_err(|e| Error::Gate(format!("store header: {e}")))
}

impl GateStore {
    /// Creates an empty store in the (new or empty) directory `dir`.
    ///
    /// # Example
    ///
    /// **Insecure** dealer bundles (tests only), stored, reopened and consumed once:
    ///
    /// ```
    /// use coterie_spdz::{InsecureDealer, Z2k};
    /// use coterie_threshold::gates::insecure_deal_bundles;
    /// use coterie_threshold::store::GateStore;
    /// use coterie_threshold::Params;
    /// let lt = Params::insecure_toy(4, 16, 2, 3).unwrap().lt().unwrap();
    /// let mut rng = rand::rng();
    /// let ring = Z2k::new(16, 64).unwrap();
    /// let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
    /// let per_party = insecure_deal_bundles(&dealer, &ring, &lt, 3, 0, &mut rng);
    /// let dir = coterie_base::fsio::unique_temp_dir("coterie-store-doc");
    /// let store = GateStore::create(&dir, lt).unwrap();
    /// store.append(&per_party[0]).unwrap();
    /// let store = GateStore::open(&dir, lt).unwrap();
    /// assert_eq!(store.take(2).unwrap().len(), 2);
    /// assert_eq!(store.available().unwrap(), 1);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn create(dir: &Path, lt: LtParams) -> Result<Self> {
        fs::create_dir_all(dir).map_err(io)?;
        if dir.join("header.bin").exists() {
            return Err(Error::Gate("a gate store exists there already".into()));
        }
        write_synced(&dir.join("header.bin"), &store_header(&lt)?)?;
        write_cursor(&dir.join("cursor.bin"), 0)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            lt,
        })
    }

    /// Opens an existing store made for `lt`.
    pub fn open(dir: &Path, lt: LtParams) -> Result<Self> {
        let h = coterie_base::fsio::read_bounded(&dir.join("header.bin"), 64)
            .map_err(|e| Error::Gate(format!("store i/o: {e}")))?;
        if h != store_header(&lt)? {
            return Err(Error::Gate(
                "gate store of another version or parameters".into(),
            ));
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            lt,
        })
    }

    /// The id of the next bundle [`GateStore::take`] hands out.
    pub fn cursor(&self) -> Result<u64> {
        let p = self.dir.join("cursor.bin");
        match coterie_base::fsio::read_counter(&p) {
            Ok(Some(c)) => Ok(c),
            // the format before durable counters: a little-endian u64
            Ok(None) => {
                let c = fs::read(&p).map_err(io)?;
                let c: [u8; 8] = c
                    .try_into()
                    .map_err(|_| Error::Gate("corrupt cursor".into()))?;
                Ok(u64::from_le_bytes(c))
            }
            Err(e) => Err(Error::Gate(format!("store i/o: {e}"))),
        }
    }

    fn batches(&self) -> Result<Vec<(u64, PathBuf)>> {
        // The set is locked before the directory is read and until the listing is filtered: a
        // cleanup thread removes a path from the set only after deleting its file, so a file
        // listed here and deleted since is still in the set when it is checked. (Locked only
        // for the filter, a deletion could finish between the read and the check, and the
        // listing would show a file that is gone; CI saw `append` fail on one.)
        let doomed = doomed();
        let mut v = Vec::new();
        for e in fs::read_dir(&self.dir).map_err(io)? {
            let p = e.map_err(io)?.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let id = name
                .strip_prefix("batch-")
                .and_then(|s| s.strip_suffix(".bin"))
                .and_then(|s| s.parse::<u64>().ok());
            if let Some(id) = id {
                v.push((id, p));
            }
        }
        #[cfg(test)]
        tests::LIST_PAUSE.with(|d| std::thread::sleep(d.get()));
        if !doomed.is_empty() {
            v.retain(|(_, p)| !doomed.contains(p));
        }
        drop(doomed);
        v.sort();
        Ok(v)
    }

    /// The id the next appended bundle must have (one past the last stored bundle). Reads only
    /// the header of the last batch file.
    pub fn end(&self) -> Result<u64> {
        match self.batches()?.last() {
            Some(last) => Self::end_of(last),
            None => self.cursor(),
        }
    }

    /// One past the last bundle of the batch file `last` (its first id and path), from its
    /// header.
    fn end_of((id, p): &(u64, PathBuf)) -> Result<u64> {
        use std::io::Read;
        let mut head = [0u8; HEADER];
        fs::File::open(p)
            .and_then(|mut f| f.read_exact(&mut head))
            .map_err(io)?;
        let found = coterie_base::envelope::peek(&head)
            .map_err(|e| Error::Gate(format!("bundle batch: {e}")))?;
        if found != (BATCH_TAG, VERSION) {
            return Err(Error::Gate("bundle batch: bad header".into()));
        }
        let at = coterie_base::envelope::HEADER_LEN + 12;
        let count = u32::from_le_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
        Ok(id + u64::from(count))
    }

    /// Bundles stored and not yet handed out.
    pub fn available(&self) -> Result<u64> {
        Ok(self.end()?.saturating_sub(self.cursor()?))
    }

    /// Discards every stored bundle and moves the cursor to `id` (durably, never backwards): used
    /// when the nodes' stores disagree after a crash, so that they continue from a common id and
    /// no bundle any node may have touched is used again.
    pub fn discard_to(&self, id: u64) -> Result<()> {
        let cur = self.cursor()?;
        if id < cur {
            return Err(Error::Gate(format!(
                "cursor {cur} cannot move back to {id}"
            )));
        }
        write_cursor(&self.dir.join("cursor.bin"), id)?;
        for (_, p) in self.batches()? {
            fs::remove_file(p).map_err(io)?;
        }
        Ok(())
    }

    /// Appends a batch of consecutive bundles; their ids must continue the stored ones.
    pub fn append(&self, bundles: &[GateBundle]) -> Result<()> {
        let Some(first) = bundles.first().map(|b| b.id) else {
            return Ok(());
        };
        let next = self.end()?;
        if first != next {
            return Err(Error::Gate(format!(
                "batch starts at {first}, the store expects {next}"
            )));
        }
        let bytes = encode_batch(&self.lt, bundles)?;
        write_synced(&self.dir.join(format!("batch-{first}.bin")), &bytes)
    }

    /// Takes the next `count` bundles, held as they are stored ([`PackedBundles`]: one
    /// allocation, the down-cast widths, no up-cast). The cursor is advanced durably first; a
    /// batch whose bundles are all consumed is deleted. Bundles of whole words (the paper's)
    /// are read from the files straight into that allocation; other shapes go through a copy
    /// of the file's bytes, which is wiped.
    pub fn take(&self, count: usize) -> Result<PackedBundles> {
        self.take_and_left(count).map(|(b, _)| b)
    }

    /// [`GateStore::take`], and the bundles left after it: what [`GateStore::available`] would
    /// say next, without listing the directory again (a service node asks after every batch).
    pub fn take_and_left(&self, count: usize) -> Result<(PackedBundles, u64)> {
        let cur = self.cursor()?;
        let bundle_bits = PackedBundles::bundle_bits(&self.lt)?;
        let mut out = PackedBundles::with_capacity(&self.lt, true, cur, count)?;
        let mut files = Vec::new();
        let listed = self.batches()?;
        for (_, p) in &listed {
            if out.len() >= count {
                break;
            }
            // a file gone since the listing was consumed and deleted (by another process's
            // cleanup, say); a missing unconsumed file shows as a gap in the ids below
            let mut f = match fs::File::open(p) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io(e)),
            };
            let total = f.metadata().map_err(io)?.len();
            if total > MAX_BATCH_BYTES as u64 {
                return Err(Error::Gate("batch file too large".into()));
            }
            let last = if bundle_bits.is_multiple_of(64) {
                // whole words (the paper's parameters): the bundles go from the file straight
                // into the buffer
                read_bundles(&self.lt, &mut f, total as usize, cur, count, &mut out)?
            } else {
                let mut bytes = Vec::with_capacity(total as usize);
                std::io::Read::read_to_end(&mut f, &mut bytes).map_err(io)?;
                let res = copy_bundles(&self.lt, &bytes, cur, count, bundle_bits, &mut out);
                coterie_math::buffers::wipe_bytes(&mut bytes);
                res?
            };
            files.push((p.clone(), last));
        }
        if out.len() < count {
            return Err(Error::Exhausted {
                wanted: count,
                available: out.len(),
            });
        }
        // what is left after the take: known from the files read, or from the last file's
        // header (read before the cleanup below may delete it)
        let end = match (listed.last(), files.last()) {
            (Some((_, lp)), Some((fp, last))) if lp == fp => *last,
            (Some(last), _) => Self::end_of(last)?,
            (None, _) => cur,
        };
        let new_cur = cur + count as u64;
        write_cursor(&self.dir.join("cursor.bin"), new_cur)?;
        // Deleting consumed batch files is cleanup, not what prevents reuse (the cursor is), and
        // costs 0.1-0.3 ms per file here: a thread of its own does it off the decryption's path.
        // Until it has, every listing leaves those files out (`doomed`); one left by a crash is
        // skipped by the next take and deleted then.
        let done: Vec<PathBuf> = files
            .into_iter()
            .filter(|&(_, last)| last <= new_cur)
            .map(|(p, _)| p)
            .collect();
        if !done.is_empty() {
            doomed().extend(done.iter().cloned());
            let delete = move || {
                for p in &done {
                    let _ = fs::remove_file(p);
                    doomed().remove(p);
                }
            };
            if std::thread::Builder::new()
                .name("gate-store-cleanup".into())
                .spawn(delete.clone())
                .is_err()
            {
                delete();
            }
        }
        Ok((out, end.saturating_sub(new_cur)))
    }
}

/// For a batch file of `n` bundles from id `first`, while `out` gathers `count` bundles from id
/// `from` on: one past the batch's last id, and the id of the next bundle `out` needs from this
/// batch (`None` when it needs none from it). A gap between `out` and the batch is an error.
fn wanted_span(
    first: u64,
    n: usize,
    from: u64,
    count: usize,
    out: &PackedBundles,
) -> Result<(u64, Option<u64>)> {
    let bad = |s: &str| Error::Gate(format!("bundle batch: {s}"));
    let last = first
        .checked_add(n as u64)
        .ok_or_else(|| bad("ids overflow"))?;
    if last <= from || out.len() >= count {
        return Ok((last, None));
    }
    let next = from + out.len() as u64;
    if first > next {
        return Err(bad("a gap in the stored ids"));
    }
    Ok((last, Some(next)))
}

/// Appends to `out` the bundles of the open batch file `f` (of `total` bytes) from id `from` on,
/// up to `count` in all, read straight into `out` (bundles of whole words only); returns one
/// past the batch's last id. Only the header and the bundles taken are read.
fn read_bundles(
    lt: &LtParams,
    f: &mut fs::File,
    total: usize,
    from: u64,
    count: usize,
    out: &mut PackedBundles,
) -> Result<u64> {
    use std::io::Read;
    let bad = |s: &str| Error::Gate(format!("bundle batch: {s}"));
    let mut head = [0u8; HEADER];
    f.read_exact(&mut head).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => bad("truncated"),
        _ => io(e),
    })?;
    let (first, n) = batch_header(lt, &head, total)?;
    let (last, next) = match wanted_span(first, n, from, count, out)? {
        (last, None) => return Ok(last),
        (last, Some(next)) => (last, next),
    };
    let per = PackedBundles::bundle_bits(lt)? / 8;
    let skip = (next - first) as usize * per;
    let k = ((last - next) as usize).min(count - out.len());
    out.append_stored_from_file(f, (HEADER + skip) as u64, k)
        .map_err(|e| match e.kind() {
            // the length was checked against the count: the file changed under the read
            std::io::ErrorKind::UnexpectedEof => bad("truncated"),
            _ => io(e),
        })?;
    Ok(last)
}

/// Appends to `out` the bundles of the batch file `bytes` from id `from` on, up to `count` in
/// all; returns one past the batch's last id. Bundles must continue `out` without a gap.
fn copy_bundles(
    lt: &LtParams,
    bytes: &[u8],
    from: u64,
    count: usize,
    bundle_bits: usize,
    out: &mut PackedBundles,
) -> Result<u64> {
    let (first, n, stream) = open_batch(lt, bytes)?;
    let bad = |s: &str| Error::Gate(format!("bundle batch: {s}"));
    let (last, next) = match wanted_span(first, n, from, count, out)? {
        (last, None) => return Ok(last),
        (last, Some(next)) => (last, next),
    };
    if bundle_bits.is_multiple_of(8) {
        // every bundle starts on a byte (the paper's parameters: 349,184 bits): whole words
        // straight from the bytes, no bit reader
        let per = bundle_bits / 8;
        let from_byte = (next - first) as usize * per;
        for j in 0..(last - next) as usize {
            if out.len() >= count {
                break;
            }
            let at = from_byte + j * per;
            let b = stream.get(at..at + per).ok_or_else(|| bad("truncated"))?;
            out.append_stored_bytes(b);
        }
        return Ok(last);
    }
    let mut r = BitReader::new(stream);
    // skip the bundles before `next` (consumed already)
    let mut skip = (next - first) as usize * bundle_bits;
    while skip > 0 {
        let w = skip.min(64) as u32;
        r.get(w).ok_or_else(|| bad("truncated"))?;
        skip -= w as usize;
    }
    for _ in next..last {
        if out.len() >= count {
            break;
        }
        out.append_stored(&mut r).ok_or_else(|| bad("truncated"))?;
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use coterie_spdz::{InsecureDealer, Z2k};

    #[test]
    fn batch_codec_roundtrip_and_refusals() {
        let lt = LtParams::new(16, 14, 4).unwrap();
        let ring = Z2k::new(16, 64).unwrap();
        let mut rng = rand::rng();
        let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
        let mut per = crate::gates::insecure_deal_bundles(&dealer, &ring, &lt, 3, 7, &mut rng);
        let mine = per.remove(0);
        let bytes = encode_batch(&lt, &mine).unwrap();
        let back = decode_batch(&lt, &bytes).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(bytes.len(), batch_bytes(&lt, 3));
        let low = |x: &Sh, bits: u32| (Z2k::low_bits(x.v, bits), Z2k::low_bits(x.m, bits));
        for (a, b) in mine.iter().zip(&back) {
            assert_eq!(a.id, b.id);
            assert!(b.downcast && !a.downcast);
            // ModLTZ entries down-cast to m + s bits, Sign entries to d + 1 + s bits
            for (x, y) in a.modltz.table.iter().zip(&b.modltz.table) {
                assert_eq!(low(x, 2 + 64), (y.v, y.m));
            }
            for (x, y) in a.signs[1].table.iter().zip(&b.signs[1].table) {
                assert_eq!(low(x, lt.d() + 1 + 64), (y.v, y.m));
            }
            assert_eq!(a.signs[2].mask, b.signs[2].mask);
        }
        assert!(decode_batch(&lt, &bytes[..bytes.len() - 1]).is_err());
        assert!(decode_batch(&LtParams::new(16, 14, 3).unwrap(), &bytes).is_err());
        let mut long = bytes.clone();
        long.push(0);
        assert!(decode_batch(&lt, &long).is_err());
        // The count field (payload offset 12) lies about the length.
        let mut bad = bytes.clone();
        bad[HEADER - 4..HEADER].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_batch(&lt, &bad).is_err());
        let mut bad = bytes.clone();
        bad[HEADER - 4..HEADER].copy_from_slice(&2u32.to_le_bytes());
        assert!(decode_batch(&lt, &bad).is_err());
        // A wrong envelope version (2, the last version with its own header) is refused by name.
        let mut bad = bytes.clone();
        bad[8..10].copy_from_slice(&2u16.to_le_bytes());
        let e = decode_batch(&lt, &bad).unwrap_err().to_string();
        assert!(e.contains("version 2") && e.contains("version 3"), "{e}");
        // Another tag, and a version-2 file (magic `CTGB`, version byte 2).
        let mut bad = bytes.clone();
        bad[4..8].copy_from_slice(b"THgh");
        assert!(decode_batch(&lt, &bad).is_err());
        let mut old = b"CTGB".to_vec();
        old.extend_from_slice(&[2, 16, 14, 4, 64]);
        old.extend_from_slice(&7u64.to_le_bytes());
        old.extend_from_slice(&3u32.to_le_bytes());
        old.extend_from_slice(&bytes[HEADER..]);
        assert!(decode_batch(&lt, &old).is_err());
        // Garbage never panics.
        for cut in 0..HEADER + 2 {
            assert!(decode_batch(&lt, &bytes[..cut]).is_err());
        }
    }

    #[test]
    fn store_header_is_an_envelope_and_other_versions_are_refused() {
        let lt = LtParams::new(16, 14, 4).unwrap();
        let dir = coterie_base::fsio::unique_temp_dir("coterie-store-header");
        GateStore::create(&dir, lt).unwrap();
        let h = fs::read(dir.join("header.bin")).unwrap();
        assert_eq!(coterie_base::envelope::peek(&h).unwrap(), (STORE_TAG, 3));
        assert!(GateStore::open(&dir, lt).is_ok());
        assert!(GateStore::open(&dir, LtParams::new(16, 14, 3).unwrap()).is_err());
        // A version-2 store header (version byte, then (k, l, b)) is refused.
        fs::write(dir.join("header.bin"), [2u8, 16, 14, 4]).unwrap();
        assert!(GateStore::open(&dir, lt).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Stored material per decryption with the paper's parameters (k = 64, l = 63, b = 8, s = 64):
    /// the formula of seed 000 §10.3, 346,880 bits of tables (the paper's figure), plus the
    /// masks, and the file size of a batch matches it to the byte.
    #[test]
    fn stored_bits_per_decryption_match_the_paper() {
        let lt = crate::Params::paper().lt().unwrap();
        let (d, b, bt, m, s) = (8usize, 8usize, 7usize, 1usize, 64usize);
        let formula =
            2 * ((d + 1 + s) * ((d - 1) * (1 << b) + (1 << bt)) + (m + s) * (1 << (d + 1)));
        assert_eq!(formula, 346_880);
        let (tables, masks) = stored_bits_per_bundle(&lt);
        assert_eq!(tables, formula);
        assert_eq!(masks, 2 * 128 * 9);
        let ring = Z2k::spdz2k_64();
        let mut rng = rand::rng();
        let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
        let per = crate::gates::insecure_deal_bundles(&dealer, &ring, &lt, 2, 0, &mut rng);
        let bytes = encode_batch(&lt, &per[0]).unwrap();
        // The envelope header (14 bytes), the payload header (16) and the bit-packed bundles.
        assert_eq!(HEADER, 14 + 16);
        assert_eq!(
            bytes.len(),
            HEADER + (2 * (346_880usize + 2_304)).div_ceil(8)
        );
        let back = decode_batch(&lt, &bytes).unwrap();
        assert_eq!(back[1].modltz.table.len(), 512);
    }

    /// `take` hands out the stored bits as they are (down-cast, one buffer spanning the batch
    /// files, consumed bundles skipped), the same shares `decode_batch` reads.
    #[test]
    fn take_reads_the_stored_bits_in_place() {
        // toy shapes whose bundles are not a whole number of bytes (the bit reader) or bytes but
        // not words (the byte copy), and the paper's (whole words: read straight into the
        // buffer), all tested
        let toys: Vec<(u32, LtParams)> = (9..=24u32)
            .flat_map(|k| (4..k).flat_map(move |l| (2..=4u32).map(move |b| (k, l, b))))
            .filter_map(|(k, l, b)| LtParams::new(k, l, b).ok().map(|lt| (k, lt)))
            .collect();
        let bits = |lt: &LtParams| PackedBundles::bundle_bits(lt).unwrap();
        let odd = toys
            .iter()
            .find(|(_, lt)| !bits(lt).is_multiple_of(8))
            .unwrap();
        let bytes = toys
            .iter()
            .find(|(_, lt)| bits(lt).is_multiple_of(8) && !bits(lt).is_multiple_of(64))
            .unwrap();
        let shapes = [
            (odd.1, Z2k::new(odd.0, 64).unwrap()),
            (bytes.1, Z2k::new(bytes.0, 64).unwrap()),
            (Params::paper().lt().unwrap(), Z2k::spdz2k_64()),
        ];
        let aligned: Vec<(bool, bool)> = shapes
            .iter()
            .map(|(lt, _)| (bits(lt).is_multiple_of(8), bits(lt).is_multiple_of(64)))
            .collect();
        assert_eq!(aligned, [(false, false), (true, false), (true, true)]);
        for (lt, ring) in shapes {
            let mut rng = rand::rng();
            let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
            let mine =
                crate::gates::insecure_deal_bundles(&dealer, &ring, &lt, 5, 0, &mut rng).remove(0);
            let want = decode_batch(&lt, &encode_batch(&lt, &mine).unwrap()).unwrap();
            let dir = coterie_base::fsio::unique_temp_dir("coterie-store-take");
            let store = GateStore::create(&dir, lt).unwrap();
            store.append(&mine[..3]).unwrap();
            store.append(&mine[3..]).unwrap();
            // one bundle, then three across the two files (the first file's consumed bundle
            // skipped), then the last
            // (the counts left that `take_and_left` reports are what `available` says next)
            let a = store.take(1).unwrap();
            assert_eq!(store.available().unwrap(), 4);
            let (b, left) = store.take_and_left(3).unwrap();
            assert_eq!((left, store.available().unwrap()), (1, 1));
            let (c, left) = store.take_and_left(1).unwrap();
            assert_eq!((left, store.available().unwrap()), (0, 0));
            assert!(a.is_downcast() && b.is_downcast() && c.is_downcast());
            assert_eq!(
                (a.first_id(), b.first_id(), b.len(), c.first_id()),
                (0, 1, 3, 4)
            );
            for (w, p) in want.iter().zip(a.iter().chain(b.iter()).chain(c.iter())) {
                assert_eq!(w.id, p.id);
                for g in 0..=lt.d() as usize {
                    let gate = if g == lt.d() as usize {
                        &w.modltz
                    } else {
                        &w.signs[g]
                    };
                    assert_eq!(p.mask(g).unwrap(), gate.mask);
                    for (x, e) in gate.table.iter().enumerate() {
                        assert_eq!(&p.entry(g, x).unwrap(), e);
                    }
                }
            }
            assert!(matches!(store.take(1), Err(Error::Exhausted { .. })));
            assert_eq!(store.cursor().unwrap(), 5);
            // files on their way out are never read again: the store is consistent at once
            assert_eq!((store.end().unwrap(), store.available().unwrap()), (5, 0));
            // consumed batch files go (in the background): none is left on disk for long
            let on_disk = || {
                fs::read_dir(&dir)
                    .unwrap()
                    .filter(|e| {
                        let e = e.as_ref().unwrap().file_name();
                        e.to_string_lossy().starts_with("batch-")
                    })
                    .count()
            };
            let t = std::time::Instant::now();
            while on_disk() > 0 {
                assert!(
                    t.elapsed() < std::time::Duration::from_secs(10),
                    "files left"
                );
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            fs::remove_dir_all(&dir).unwrap();
        }
    }

    /// A damaged batch file (cut short, or a header for other parameters) is a clear error of
    /// the take that reaches it, never a panic or a short buffer, and the cursor does not move;
    /// the paper's shape, whose bundles are read straight into the buffer.
    #[test]
    fn a_damaged_batch_file_is_an_error_and_the_cursor_stays() {
        let lt = Params::paper().lt().unwrap();
        let ring = Z2k::spdz2k_64();
        let mut rng = rand::rng();
        let dealer = InsecureDealer::insecure_new(ring, 2, &mut rng).unwrap();
        let mine =
            crate::gates::insecure_deal_bundles(&dealer, &ring, &lt, 4, 0, &mut rng).remove(0);
        for damage in ["cut", "params"] {
            let dir = coterie_base::fsio::unique_temp_dir("coterie-store-damaged");
            let store = GateStore::create(&dir, lt).unwrap();
            store.append(&mine[..2]).unwrap();
            store.append(&mine[2..]).unwrap();
            let path = dir.join("batch-2.bin");
            let mut bytes = fs::read(&path).unwrap();
            match damage {
                "cut" => bytes.truncate(bytes.len() - 100),
                _ => bytes[coterie_base::envelope::HEADER_LEN] ^= 1,
            }
            fs::write(&path, &bytes).unwrap();
            // the first file alone is fine
            assert_eq!(store.take(1).unwrap().len(), 1);
            let e = store.take(2).unwrap_err();
            let want = if damage == "cut" {
                "length"
            } else {
                "other parameters"
            };
            assert!(
                matches!(&e, Error::Gate(m) if m.contains(want)),
                "{damage}: {e}"
            );
            assert_eq!(store.cursor().unwrap(), 1, "{damage}");
            fs::remove_dir_all(&dir).unwrap();
        }
    }

    thread_local! {
        /// A pause between reading the directory and filtering the listing, in the listing
        /// thread only (widens the window a deletion could finish in).
        pub(super) static LIST_PAUSE: std::cell::Cell<std::time::Duration> =
            const { std::cell::Cell::new(std::time::Duration::ZERO) };
    }

    /// The listing right after a take that consumed files, with a wide window between reading
    /// the directory and filtering it: every listed file still exists, because the cleanup
    /// cannot take a path out of the set while a listing holds it (CI once saw `append` open a
    /// listed file that was gone).
    /// A store of small parameters in a fresh directory named after `name`, and an **insecure**
    /// dealer for two parties (tests only).
    struct SmallStore {
        lt: LtParams,
        ring: Z2k,
        dealer: InsecureDealer<Z2k>,
        dir: std::path::PathBuf,
        store: GateStore,
    }

    impl SmallStore {
        fn new(name: &str) -> Self {
            let lt = LtParams::new(16, 14, 4).unwrap();
            let ring = Z2k::new(16, 64).unwrap();
            let dealer = InsecureDealer::insecure_new(ring, 2, &mut rand::rng()).unwrap();
            let dir = coterie_base::fsio::unique_temp_dir(name);
            let store = GateStore::create(&dir, lt).unwrap();
            Self {
                lt,
                ring,
                dealer,
                dir,
                store,
            }
        }

        /// Deals party 0's bundles `first..first + count` and appends each as a file of its own.
        fn append_one_per_file(&self, first: u64, count: usize) {
            let (d, r, lt) = (&self.dealer, &self.ring, &self.lt);
            let b = crate::gates::insecure_deal_bundles(d, r, lt, count, first, &mut rand::rng())
                .remove(0);
            for one in b.chunks(1) {
                self.store.append(one).unwrap();
            }
        }
    }

    #[test]
    fn a_listing_never_shows_a_file_deleted_while_it_was_made() {
        let s = SmallStore::new("coterie-store-listing");
        let store = &s.store;
        s.append_one_per_file(0, 21);
        store.take(20).unwrap();
        LIST_PAUSE.with(|d| d.set(std::time::Duration::from_millis(300)));
        let listed = store.batches();
        LIST_PAUSE.with(|d| d.set(std::time::Duration::ZERO));
        let listed = listed.unwrap();
        for (id, p) in &listed {
            assert!(p.exists(), "batch {id} listed but deleted");
        }
        assert_eq!(listed.len(), 1);
        assert_eq!(store.end().unwrap(), 21);
        fs::remove_dir_all(&s.dir).ok();
    }

    /// A take that consumes many whole files, followed at once by the next take, while the
    /// cleanup thread deletes them: no listing shows a file on its way out, so the next take and
    /// `end` never read one (the service, with 150 files per take, once failed with "No such file
    /// or directory" before the `doomed` filter; here the deletion is usually too quick to
    /// collide, so the listing is also checked directly).
    #[test]
    fn cleanup_never_races_the_next_take() {
        let s = SmallStore::new("coterie-store-cleanup");
        let store = &s.store;
        let per_round = 80;
        let mut next = 0u64;
        for _ in 0..6 {
            s.append_one_per_file(next, per_round + 1);
            let got = store.take(per_round).unwrap();
            assert_eq!(got.first_id(), next);
            let listed = store.batches().unwrap();
            assert_eq!(listed.len(), 1, "only the unconsumed file is listed");
            assert_eq!(listed[0].0, next + per_round as u64);
            let last = store.take(1).unwrap();
            assert_eq!(last.first_id(), next + per_round as u64);
            next += per_round as u64 + 1;
            assert_eq!(
                (store.end().unwrap(), store.available().unwrap()),
                (next, 0)
            );
        }
        fs::remove_dir_all(&s.dir).ok();
    }
}
