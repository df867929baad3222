//! A per-party on-disk store of gate bundles with a durable consumption cursor: bundles are
//! handed out in id order, and the cursor is advanced on disk (written, synced, renamed)
//! **before** a bundle is returned, so a crash and restart never hands a bundle out twice
//! (seed 000 §4 "gates are single-use", §16 [ENG] preprocessing storage).
//!
//! Consumed bundles stay in their batch file until the whole batch is consumed (then the file
//! is deleted); the cursor, not the file contents, is what prevents reuse. Files are not
//! encrypted at rest.
//!
//! Layout of a store directory:
//! * `header.bin`: format version, `(k, l, b)`, party, number of parties;
//! * `batch-<first id>.bin`: a batch of consecutive bundles (format below);
//! * `cursor.bin`: the id of the next bundle to hand out (little-endian `u64`).
//!
//! Bundle batch format, version 1: magic `b"CTGB"`, version `u8`, `(k, l, b)` as `u8`s, first id
//! `u64`, count `u32`, then per bundle and per gate (Sign gates, then the ModLTZ gate) the mask
//! and the table entries, each a share `(v, m)` as two little-endian `u128`. Sizes are implied
//! by `(k, l, b)`; the decoder checks the exact length before allocating.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use coterie_spdz::Share;

use crate::gates::{Gate, GateBundle, Sh};
use crate::params::LtParams;
use crate::{Error, Result};

const MAGIC: [u8; 4] = *b"CTGB";
const VERSION: u8 = 1;
/// Largest batch file accepted (bytes).
pub const MAX_BATCH_BYTES: usize = 1 << 31;

fn io(e: std::io::Error) -> Error {
    Error::Gate(format!("store i/o: {e}"))
}

fn entries(lt: &LtParams) -> usize {
    lt.gate_widths().len() + lt.table_entries()
}

/// Encodes consecutive bundles (ids `first, first + 1, ...`).
pub fn encode_batch(lt: &LtParams, bundles: &[GateBundle]) -> Result<Vec<u8>> {
    let first = bundles.first().map_or(0, |b| b.id);
    let mut out = Vec::with_capacity(20 + bundles.len() * entries(lt) * 32);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&[VERSION, lt.k as u8, lt.l as u8, lt.b as u8]);
    out.extend_from_slice(&first.to_le_bytes());
    out.extend_from_slice(&(bundles.len() as u32).to_le_bytes());
    let put = |out: &mut Vec<u8>, s: &Sh| {
        out.extend_from_slice(&s.v.to_le_bytes());
        out.extend_from_slice(&s.m.to_le_bytes());
    };
    for (j, b) in bundles.iter().enumerate() {
        b.check_shape(lt)?;
        if b.id != first + j as u64 {
            return Err(Error::Gate("a batch must hold consecutive ids".into()));
        }
        for g in b.signs.iter().chain(std::iter::once(&b.modltz)) {
            put(&mut out, &g.mask);
            g.table.iter().for_each(|s| put(&mut out, s));
        }
    }
    Ok(out)
}

/// Decodes a batch written by [`encode_batch`], checking it against `lt`.
pub fn decode_batch(lt: &LtParams, bytes: &[u8]) -> Result<Vec<GateBundle>> {
    let bad = |s: &str| Error::Gate(format!("bundle batch: {s}"));
    if bytes.len() < 20 || bytes[..4] != MAGIC {
        return Err(bad("bad header"));
    }
    if bytes[4] != VERSION {
        return Err(bad("unsupported version"));
    }
    if (
        u32::from(bytes[5]),
        u32::from(bytes[6]),
        u32::from(bytes[7]),
    ) != (lt.k, lt.l, lt.b)
    {
        return Err(bad("other parameters"));
    }
    let first = u64::from_le_bytes(bytes[8..16].try_into().map_err(|_| bad("id"))?);
    let count = u32::from_le_bytes(bytes[16..20].try_into().map_err(|_| bad("count"))?) as usize;
    let per = entries(lt) * 32;
    if count.checked_mul(per).and_then(|x| x.checked_add(20)) != Some(bytes.len()) {
        return Err(bad("length does not match the count"));
    }
    let mut pos = 20;
    let mut get = || {
        let v = u128::from_le_bytes(bytes[pos..pos + 16].try_into().unwrap_or([0; 16]));
        let m = u128::from_le_bytes(bytes[pos + 16..pos + 32].try_into().unwrap_or([0; 16]));
        pos += 32;
        Share { v, m }
    };
    let widths = lt.gate_widths();
    let mut out = Vec::with_capacity(count);
    for j in 0..count {
        let mut gates: Vec<Gate> = widths
            .iter()
            .map(|&a| {
                let mask = get();
                let table = (0..1usize << a).map(|_| get()).collect();
                Gate { mask, table }
            })
            .collect();
        let modltz = gates.pop().ok_or_else(|| bad("no gates"))?;
        out.push(GateBundle {
            id: first + j as u64,
            lt: *lt,
            signs: gates,
            modltz,
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

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut f = fs::File::create(&tmp).map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    f.sync_all().map_err(io)?;
    fs::rename(&tmp, path).map_err(io)?;
    if let Some(Ok(d)) = path.parent().map(fs::File::open) {
        d.sync_all().ok();
    }
    Ok(())
}

impl GateStore {
    /// Creates an empty store in the (new or empty) directory `dir`.
    pub fn create(dir: &Path, lt: LtParams) -> Result<Self> {
        fs::create_dir_all(dir).map_err(io)?;
        if dir.join("header.bin").exists() {
            return Err(Error::Gate("a gate store exists there already".into()));
        }
        write_synced(
            &dir.join("header.bin"),
            &[VERSION, lt.k as u8, lt.l as u8, lt.b as u8],
        )?;
        write_synced(&dir.join("cursor.bin"), &0u64.to_le_bytes())?;
        Ok(Self {
            dir: dir.to_path_buf(),
            lt,
        })
    }

    /// Opens an existing store made for `lt`.
    pub fn open(dir: &Path, lt: LtParams) -> Result<Self> {
        let h = fs::read(dir.join("header.bin")).map_err(io)?;
        if h != [VERSION, lt.k as u8, lt.l as u8, lt.b as u8] {
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
        let c = fs::read(self.dir.join("cursor.bin")).map_err(io)?;
        let c: [u8; 8] = c
            .try_into()
            .map_err(|_| Error::Gate("corrupt cursor".into()))?;
        Ok(u64::from_le_bytes(c))
    }

    fn batches(&self) -> Result<Vec<(u64, PathBuf)>> {
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
        v.sort();
        Ok(v)
    }

    /// The id the next appended bundle must have (one past the last stored bundle). Reads only
    /// the header of the last batch file.
    pub fn end(&self) -> Result<u64> {
        match self.batches()?.last() {
            Some((id, p)) => {
                use std::io::Read;
                let mut head = [0u8; 20];
                fs::File::open(p)
                    .and_then(|mut f| f.read_exact(&mut head))
                    .map_err(io)?;
                if head[..4] != MAGIC {
                    return Err(Error::Gate("bundle batch: bad header".into()));
                }
                let count = u32::from_le_bytes([head[16], head[17], head[18], head[19]]);
                Ok(id + u64::from(count))
            }
            None => self.cursor(),
        }
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
        write_synced(&self.dir.join("cursor.bin"), &id.to_le_bytes())?;
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

    /// Takes the next `count` bundles. The cursor is advanced durably first; a batch whose
    /// bundles are all consumed is deleted.
    pub fn take(&self, count: usize) -> Result<Vec<GateBundle>> {
        let cur = self.cursor()?;
        let mut out = Vec::with_capacity(count);
        let mut files = Vec::new();
        for (_, p) in self.batches()? {
            if out.len() >= count {
                break;
            }
            let meta = fs::metadata(&p).map_err(io)?;
            if meta.len() as usize > MAX_BATCH_BYTES {
                return Err(Error::Gate("batch file too large".into()));
            }
            let bytes = fs::read(&p).map_err(io)?;
            let batch = decode_batch(&self.lt, &bytes)?;
            let last = batch.last().map_or(0, |b| b.id + 1);
            for b in batch {
                if b.id >= cur && out.len() < count {
                    out.push(b);
                }
            }
            files.push((p, last));
        }
        if out.len() < count {
            return Err(Error::Exhausted {
                wanted: count,
                available: out.len(),
            });
        }
        let new_cur = cur + count as u64;
        write_synced(&self.dir.join("cursor.bin"), &new_cur.to_le_bytes())?;
        for (p, last) in files {
            if last <= new_cur {
                fs::remove_file(p).ok();
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coterie_spdz::{InsecureDealer, Z2k};

    #[test]
    fn batch_codec_roundtrip_and_refusals() {
        let lt = LtParams::new(16, 14, 4).unwrap();
        let ring = Z2k::new(16, 64).unwrap();
        let mut rng = rand::rng();
        let dealer = InsecureDealer::new_insecure(ring, 2, &mut rng).unwrap();
        let mut per = crate::gates::insecure_deal_bundles(&dealer, &ring, &lt, 3, 7, &mut rng);
        let mine = per.remove(0);
        let bytes = encode_batch(&lt, &mine).unwrap();
        let back = decode_batch(&lt, &bytes).unwrap();
        assert_eq!(back.len(), 3);
        for (a, b) in mine.iter().zip(&back) {
            assert_eq!(a.id, b.id);
            assert_eq!(a.modltz.table, b.modltz.table);
            assert_eq!(a.signs[2].mask, b.signs[2].mask);
        }
        assert!(decode_batch(&lt, &bytes[..bytes.len() - 1]).is_err());
        assert!(decode_batch(&LtParams::new(16, 14, 3).unwrap(), &bytes).is_err());
        let mut bad = bytes.clone();
        bad[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_batch(&lt, &bad).is_err());
        let mut bad = bytes;
        bad[4] = 9;
        assert!(decode_batch(&lt, &bad).is_err());
    }
}
