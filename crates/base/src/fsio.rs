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

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
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
