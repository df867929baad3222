//! Durable file writes and bounded reads.
//!
//! [`write_atomic`] never leaves a half-written file behind: it writes a temporary file in the
//! same directory, syncs it, renames it over the target and syncs the directory, so after a crash
//! the target holds either the old or the new content, and a completed call survives the crash.
//! Stores of one-time material (SPDZ triples, threshold gates) rely on this to mark material as
//! used before using it.
//!
//! ```
//! let dir = coterie_base::fsio::unique_temp_dir("coterie-base-doc");
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("state.bin");
//! coterie_base::fsio::write_atomic(&path, b"v1").unwrap();
//! coterie_base::fsio::write_atomic(&path, b"v2").unwrap();
//! assert_eq!(coterie_base::fsio::read_bounded(&path, 16).unwrap(), b"v2");
//! assert!(coterie_base::fsio::read_bounded(&path, 1).is_err());
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```
//!
//! [`write_counter`] is the cheap form for the stores' consumption cursors, which move at every
//! use: it overwrites one of two checksummed slots of a fixed file in place and syncs the data,
//! instead of creating, syncing and renaming a new file (a new inode per write: on ext4 here the
//! inode allocations of a busy decryption service cost more CPU than the decryptions; see
//! [`write_counter`]).

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::{Error, Result};

fn io<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |source| Error::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// A fresh path under [`std::env::temp_dir`] for scratch files of tests, examples and demos:
/// `<tmp>/<prefix>-<process id>-<counter>-<nanoseconds>`, distinct for every call in this
/// process (a process-wide counter), from concurrent processes (the process id) and from
/// earlier runs (the clock). It **creates nothing**: the caller creates the directory (e.g.
/// with [`std::fs::create_dir_all`]) and removes it when done.
///
/// ```
/// let a = coterie_base::fsio::unique_temp_dir("coterie-doc");
/// let b = coterie_base::fsio::unique_temp_dir("coterie-doc");
/// assert_ne!(a, b);
/// assert!(a.starts_with(std::env::temp_dir()) && !a.exists());
/// ```
pub fn unique_temp_dir(prefix: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::env::temp_dir().join(format!(
        "{prefix}-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Syncs a directory, so that a rename or a new file in it is durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    let d = File::open(dir).map_err(io("open directory", dir))?;
    d.sync_all().map_err(io("sync directory", dir))
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn temp_name(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".tmp-{}", std::process::id()));
    parent_of(path).join(name)
}

fn write_with(path: &Path, bytes: &[u8], private: bool) -> Result<()> {
    let dir = parent_of(path);
    let tmp = temp_name(path);
    let mut o = OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let result = (|| {
        let mut f = o.open(&tmp).map_err(io("create", &tmp))?;
        #[cfg(unix)]
        if private {
            // The mode above applies only to a new file; a stale temporary one keeps its own.
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(fs::Permissions::from_mode(0o600))
                .map_err(io("chmod", &tmp))?;
        }
        f.write_all(bytes).map_err(io("write", &tmp))?;
        f.sync_all().map_err(io("sync", &tmp))?;
        drop(f);
        fs::rename(&tmp, path).map_err(io("rename", path))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    sync_dir(&dir)
}

/// Replaces the content of `path` atomically and durably (temp file, fsync, rename, fsync of the
/// directory). The directory must exist.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with(path, bytes, false)
}

/// As [`write_atomic`], for secrets: the file is readable and writable by its owner only (mode
/// 0o600 on unix, also when it replaces a file with wider permissions).
pub fn write_atomic_private(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with(path, bytes, true)
}

/// Length of a durable counter file: two slots of [`COUNTER_SLOT`] bytes.
pub const COUNTER_FILE_LEN: u64 = 2 * COUNTER_SLOT as u64;
/// Bytes of one slot: magic `CTRS`, format 1 (`u32`), sequence number, value, checksum (`u64`
/// each, little-endian).
pub const COUNTER_SLOT: usize = 32;
const COUNTER_MAGIC: &[u8; 4] = b"CTRS";

/// A checksum of a slot's first 24 bytes (against torn writes, not adversaries): a SplitMix64
/// chain over its three words.
fn slot_check(head: &[u8]) -> u64 {
    let mut h = 0x636f_7465_7269_6521u64;
    for w in head.chunks_exact(8) {
        let mut x = h ^ u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h = x ^ (x >> 31);
    }
    h
}

fn encode_slot(seq: u64, value: u64) -> [u8; COUNTER_SLOT] {
    let mut b = [0u8; COUNTER_SLOT];
    b[..4].copy_from_slice(COUNTER_MAGIC);
    b[4..8].copy_from_slice(&1u32.to_le_bytes());
    b[8..16].copy_from_slice(&seq.to_le_bytes());
    b[16..24].copy_from_slice(&value.to_le_bytes());
    let c = slot_check(&b[..24]);
    b[24..].copy_from_slice(&c.to_le_bytes());
    b
}

/// `(sequence number, value)` of a valid slot.
fn decode_slot(b: &[u8]) -> Option<(u64, u64)> {
    if b.len() != COUNTER_SLOT || &b[..4] != COUNTER_MAGIC || b[4..8] != 1u32.to_le_bytes() {
        return None;
    }
    let word = |r: std::ops::Range<usize>| b.get(r).and_then(|w| w.try_into().ok());
    let c = u64::from_le_bytes(word(24..32)?);
    if c != slot_check(&b[..24]) {
        return None;
    }
    Some((
        u64::from_le_bytes(word(8..16)?),
        u64::from_le_bytes(word(16..24)?),
    ))
}

/// The valid slots of a counter file's bytes: `(slot index, sequence, value)`.
fn counter_slots(bytes: &[u8]) -> impl Iterator<Item = (usize, u64, u64)> + '_ {
    bytes
        .chunks_exact(COUNTER_SLOT)
        .take(2)
        .enumerate()
        .filter_map(|(i, b)| decode_slot(b).map(|(s, v)| (i, s, v)))
}

/// Reads a durable counter written by [`write_counter`]: `Ok(None)` if `path` is missing or is
/// not a counter file (another length: a caller's older format), the value of the valid slot
/// with the larger sequence number otherwise, and [`Error::CorruptCounter`] if neither slot is
/// valid.
///
/// ```
/// let dir = coterie_base::fsio::unique_temp_dir("coterie-base-counter");
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("cursor.bin");
/// assert_eq!(coterie_base::fsio::read_counter(&path).unwrap(), None);
/// for v in [5, 9, 12] {
///     coterie_base::fsio::write_counter(&path, v).unwrap();
/// }
/// assert_eq!(coterie_base::fsio::read_counter(&path).unwrap(), Some(12));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn read_counter(path: &Path) -> Result<Option<u64>> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io("read", path)(e)),
    };
    if bytes.len() as u64 != COUNTER_FILE_LEN {
        return Ok(None);
    }
    counter_slots(&bytes)
        .max_by_key(|&(_, s, _)| s)
        .map(|(_, _, v)| Some(v))
        .ok_or_else(|| Error::CorruptCounter {
            path: path.to_path_buf(),
        })
}

/// Stores `value` in the durable counter at `path`: once [`write_counter`] returns, a crash
/// leaves [`read_counter`] reading `value`; a crash during the call leaves it reading `value` or
/// the previous one. The file is two slots `(sequence, value, checksum)`; a write overwrites the
/// slot that does not hold the newest valid value with the next sequence number and syncs the
/// file's data: a torn write spoils only that slot, whose checksum then fails, and the other
/// still holds the previous value. A missing file, or one in a caller's older format, is
/// replaced by a new counter file through [`write_atomic`] (the only write that creates a file);
/// a counter file with no valid slot is refused ([`Error::CorruptCounter`]). One writer per file.
pub fn write_counter(path: &Path, value: u64) -> Result<()> {
    let current = match fs::read(path) {
        Ok(b) if b.len() as u64 == COUNTER_FILE_LEN => {
            let newest = counter_slots(&b)
                .max_by_key(|&(_, s, _)| s)
                .map(|(i, s, _)| (i, s));
            if newest.is_none() {
                // never paper over a counter whose value is lost: the caller must decide
                return Err(Error::CorruptCounter {
                    path: path.to_path_buf(),
                });
            }
            newest
        }
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io("read", path)(e)),
    };
    let Some((newest, seq)) = current else {
        let mut b = [0u8; COUNTER_FILE_LEN as usize];
        b[..COUNTER_SLOT].copy_from_slice(&encode_slot(1, value));
        return write_atomic(path, &b);
    };
    let slot = 1 - newest;
    let mut f = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io("open", path))?;
    f.seek(SeekFrom::Start((slot * COUNTER_SLOT) as u64))
        .map_err(io("seek", path))?;
    f.write_all(&encode_slot(seq.wrapping_add(1), value))
        .map_err(io("write", path))?;
    f.sync_data().map_err(io("sync", path))
}

/// Reads a whole file of at most `max` bytes; a larger file is refused without reading it.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>> {
    let f = File::open(path).map_err(io("open", path))?;
    let len = f.metadata().map_err(io("stat", path))?.len();
    if len > max {
        return Err(Error::TooLarge {
            what: path.display().to_string(),
            len,
            max,
        });
    }
    let mut b = Vec::with_capacity(len as usize);
    // `take` bounds the read even if the file grows meanwhile.
    f.take(max + 1)
        .read_to_end(&mut b)
        .map_err(io("read", path))?;
    if b.len() as u64 > max {
        return Err(Error::TooLarge {
            what: path.display().to_string(),
            len: b.len() as u64,
            max,
        });
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    #[test]
    fn counters_survive_torn_slots_and_refuse_lost_values() {
        let dir = unique_temp_dir("coterie-base-counter-test");
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("c.bin");
        // an older format is not a counter; the first write converts it
        fs::write(&p, 7u64.to_le_bytes()).unwrap();
        assert_eq!(read_counter(&p).unwrap(), None);
        for v in 1..=5u64 {
            write_counter(&p, v * 10).unwrap();
            assert_eq!(read_counter(&p).unwrap(), Some(v * 10));
            assert_eq!(fs::metadata(&p).unwrap().len(), COUNTER_FILE_LEN);
        }
        // a torn write of the next value spoils only its slot: the previous value stays
        let good = fs::read(&p).unwrap();
        let newest = counter_slots(&good).max_by_key(|&(_, s, _)| s).unwrap().0;
        let mut torn = good.clone();
        torn[(1 - newest) * COUNTER_SLOT + 17] ^= 0xff;
        torn[(1 - newest) * COUNTER_SLOT..(1 - newest) * COUNTER_SLOT + 8].fill(0);
        fs::write(&p, &torn).unwrap();
        assert_eq!(read_counter(&p).unwrap(), Some(50));
        // ... and a torn newest slot falls back to the one before it
        let mut torn_newest = good.clone();
        torn_newest[newest * COUNTER_SLOT + 20] ^= 1;
        fs::write(&p, &torn_newest).unwrap();
        assert_eq!(read_counter(&p).unwrap(), Some(40));
        // the next write goes over the spoiled slot and is read back
        write_counter(&p, 60).unwrap();
        assert_eq!(read_counter(&p).unwrap(), Some(60));
        write_counter(&p, 70).unwrap();
        assert_eq!(read_counter(&p).unwrap(), Some(70));
        // no valid slot: reading and writing both refuse
        fs::write(&p, [0xAAu8; COUNTER_FILE_LEN as usize]).unwrap();
        assert!(matches!(
            read_counter(&p),
            Err(Error::CorruptCounter { .. })
        ));
        assert!(matches!(
            write_counter(&p, 80),
            Err(Error::CorruptCounter { .. })
        ));
        // a missing file starts at the written value
        fs::remove_file(&p).unwrap();
        assert_eq!(read_counter(&p).unwrap(), None);
        write_counter(&p, 3).unwrap();
        assert_eq!(read_counter(&p).unwrap(), Some(3));
        fs::remove_dir_all(&dir).unwrap();
    }

    use super::*;

    fn tmpdir(name: &str) -> PathBuf {
        let d = unique_temp_dir(&format!("coterie-base-{name}"));
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let d = tmpdir("atomic");
        let p = d.join("x.bin");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"second");
        let names: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn private_files_are_owner_only_even_over_a_public_one() {
        use std::os::unix::fs::PermissionsExt;
        let d = tmpdir("private");
        let p = d.join("key.bin");
        fs::write(&p, b"old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        fs::write(temp_name(&p), b"stale").unwrap();
        fs::set_permissions(temp_name(&p), fs::Permissions::from_mode(0o666)).unwrap();
        write_atomic_private(&p, b"secret").unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(fs::read(&p).unwrap(), b"secret");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn errors_name_the_path_and_the_limit() {
        let d = tmpdir("errors");
        let missing = d.join("nope").join("x.bin");
        let e = write_atomic(&missing, b"x").unwrap_err().to_string();
        assert!(e.contains("nope"), "{e}");
        let p = d.join("big.bin");
        write_atomic(&p, &[0u8; 100]).unwrap();
        match read_bounded(&p, 99) {
            Err(Error::TooLarge {
                len: 100, max: 99, ..
            }) => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(read_bounded(&p, 100).unwrap().len(), 100);
        assert!(read_bounded(&d.join("absent"), 10).is_err());
        fs::remove_dir_all(&d).unwrap();
    }
}
