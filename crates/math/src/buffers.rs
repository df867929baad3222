//! Large secret buffers (consumed gate tables: tens of megabytes per batch): huge pages for them,
//! and bulk wiping at the speed the memory allows.
//!
//! **Huge pages.** A buffer of 4 KiB pages read at a few scattered places per 40 KB (the table
//! entries that opened digits select) costs a TLB miss and a page walk per read.
//! [`vec_u64_huge`] allocates a buffer and, on Linux, advises the kernel to back it with
//! transparent huge pages (`madvise(MADV_HUGEPAGE)`, honoured where
//! `/sys/kernel/mm/transparent_hugepage/enabled` is `madvise` or `always`; elsewhere it is a
//! no-op): 2 MiB pages, 512 times fewer TLB entries and page faults.
//!
//! **Wiping.** `zeroize` overwrites a slice with ordinary stores. For a buffer far larger than
//! the caches every such store first reads its cache
//! line from memory (read for ownership) and later writes it back, so a wipe moves twice the
//! buffer's size over the memory bus. Non-temporal stores write whole lines without reading them:
//! on this project's 2-core machine, wiping 175 MB in 43,648-byte pieces runs at 17.0 GB/s
//! instead of 7.6 GB/s (`examples/wipe_bench.rs`, `bench/results/wipe-2026-11-26.txt`).
//!
//! [`wipe_u64`] and [`wipe_bytes`] use them on x86-64 (SSE2, part of the architecture's
//! baseline, so there is no run-time check) for slices of at least [`NT_MIN_BYTES`]; smaller slices, the unaligned ends and
//! other architectures use `zeroize`. After the stores, a store fence orders them before anything
//! the thread does next, and the slice is passed through [`std::hint::black_box`] behind a
//! compiler fence so that the compiler cannot drop the stores as dead (the same guarantee
//! `zeroize` gives with volatile stores and a compiler fence).
//!
//! **Reuse.** A large buffer freed goes back to the kernel, and the next one is faulted in page by
//! page again (on the project's VMs a first touch costs far more than the zeroing it implies).
//! [`wipe_and_recycle_u64`] and [`recycle_wiped_u64`] keep wiped buffers for the next
//! [`vec_u64_huge`] that fits (best fit; fresh ones are rounded up to a power of two of words),
//! and [`prefault_u64`] maps one ahead of its first use. [`KeptBuffers`] is that bounded,
//! best-fit set of kept buffers for any element type (coterie-spdz keeps its OT rows in one).
//!
//! **Process policy.** [`keep_freed_heap`] has glibc keep freed blocks of up to 32 MiB for
//! reuse, process-wide (the binary's choice, made once in `main`), so that the many per-batch
//! buffers of a few megabytes stop being faulted in afresh.
//!
//! **Reading.** [`extend_from_file_le`] reads little-endian words from a file straight into a
//! buffer's spare room ([`extend_from_reader_le`] from any reader, zeroing the room first), so a
//! secret read from disk needs no second buffer to copy from and wipe.

use zeroize::Zeroize;

/// The largest allocation [`keep_freed_heap`] has glibc serve from its heap instead of a
/// mapping of its own: 32 MiB, the ceiling of glibc's own adaptive threshold.
pub const HEAP_MMAP_THRESHOLD: usize = 32 << 20;

/// How much free memory at the top of a heap [`keep_freed_heap`] lets glibc keep before
/// returning it to the kernel: 512 MiB.
pub const HEAP_TRIM_THRESHOLD: usize = 512 << 20;

/// Process-wide allocator policy for a long-running party process: freed memory up to
/// [`HEAP_MMAP_THRESHOLD`] per block stays in the process for the next allocation instead of
/// going back to the kernel. Returns whether the policy is in force (glibc on Linux; elsewhere
/// nothing is changed and it returns `false`).
///
/// The OT producer and the Gilboa products allocate buffers of a few megabytes per batch (rows,
/// corrections, messages). glibc maps large blocks on their own and unmaps them when freed, and
/// trims the heap's free top beyond twice its last large block, so the next batch faulted the
/// same memory in again page by page, each page zeroed by the kernel first: about a fifth of the
/// producer's CPU (`clear_page_erms` and the fault path in `perf`; BENCHMARKS.md, SPDZ section).
/// With blocks up to 32 MiB served from the heap and up to 512 MiB of free heap kept, the memory
/// is reused. The cost: the process keeps up to that much freed memory mapped (its peak memory
/// is unchanged). Buffers above the threshold (the threshold service's gate bundles) are
/// unaffected and keep their own reuse ([`wipe_and_recycle_u64`]).
///
/// Call it once at the start of `main`; `coterie`'s binary and
/// the benchmarks do. A library never calls it on its own: the policy belongs to the process.
/// `COTERIE_KEEP_FREED_HEAP=0` in the environment turns it off (glibc's defaults stay; for a
/// host short of memory, or to measure the difference).
///
/// # Example
///
/// ```
/// let kept = coterie_math::buffers::keep_freed_heap();
/// let off = std::env::var("COTERIE_KEEP_FREED_HEAP").is_ok_and(|v| v == "0");
/// assert_eq!(kept, cfg!(all(target_os = "linux", target_env = "gnu")) && !off);
/// ```
pub fn keep_freed_heap() -> bool {
    if std::env::var("COTERIE_KEEP_FREED_HEAP").is_ok_and(|v| v == "0") {
        return false;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallopt` only changes glibc's allocator parameters; both values fit an int.
        #[allow(unsafe_code)]
        let ok = unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, HEAP_MMAP_THRESHOLD as libc::c_int) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, HEAP_TRIM_THRESHOLD as libc::c_int) == 1
        };
        ok
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Buffers at least this large get the huge-page advice of [`vec_u64_huge`].
pub const HUGE_MIN_BYTES: usize = 4 << 20;

/// An empty vector with room for `capacity` words; from [`HUGE_MIN_BYTES`] on, on Linux, its
/// memory is advised to be backed by transparent huge pages before anything is written to it
/// (see the module docs; the advice is best effort and its failure is ignored).
///
/// From [`HUGE_MIN_BYTES`] on, the smallest wiped buffer with room for `capacity` words kept by
/// [`wipe_and_recycle_u64`], [`recycle_wiped_u64`] or [`prefault_u64`] is handed out again if
/// there is one; otherwise the room is rounded up to a power of two of words (a size class), so
/// that the buffer also fits later requests somewhat larger: a service's batches vary in size
/// from one to the next (110 bundles, then 257, say), and a buffer of exactly the first size
/// fitted few of the later ones. The rounding costs address space only: pages are mapped when
/// first written.
///
/// # Example
///
/// ```
/// let mut v = coterie_math::buffers::vec_u64_huge(1 << 20);
/// assert!(v.capacity() >= 1 << 20 && v.is_empty());
/// v.resize(1 << 20, 7);
/// assert_eq!(v[12345], 7);
/// ```
pub fn vec_u64_huge(capacity: usize) -> Vec<u64> {
    if capacity.saturating_mul(8) < HUGE_MIN_BYTES {
        return Vec::with_capacity(capacity);
    }
    if let Some(v) = SPARES.take(capacity) {
        return v;
    }
    let class = capacity.checked_next_power_of_two().unwrap_or(capacity);
    let v: Vec<u64> = Vec::with_capacity(class);
    #[cfg(target_os = "linux")]
    advise_huge(v.as_ptr() as usize, v.capacity() * 8);
    v
}

/// At most this many wiped buffers wait for reuse ([`wipe_and_recycle_u64`]).
pub const SPARE_MAX: usize = 8;

/// At most this many bytes of wiped buffers wait for reuse, in all.
pub const SPARE_MAX_BYTES: usize = 256 << 20;

/// Wiped buffers kept for reuse instead of being returned to the system, within a bound on
/// their number and their bytes; handed out best fit (a request may take a larger buffer when no
/// closer one waits, so one buffer of the largest batch serves all batches). A `static` of this
/// type is one process-wide set: [`vec_u64_huge`] keeps its spares in one, and other buffers of
/// their own kind (the OT extension's rows in coterie-spdz) in theirs.
///
/// # Example
///
/// ```
/// use coterie_math::buffers::KeptBuffers;
/// static KEPT: KeptBuffers<u128> = KeptBuffers::new(4, 1 << 20);
/// let mut v: Vec<u128> = Vec::with_capacity(1000);
/// v.resize(1000, 0); // (a wiped buffer)
/// KEPT.keep(v);
/// let w = KEPT.take(500).expect("the kept buffer fits");
/// assert!(w.is_empty() && w.capacity() >= 1000);
/// assert!(KEPT.take(500).is_none());
/// ```
pub struct KeptBuffers<T> {
    bufs: std::sync::Mutex<Vec<Vec<T>>>,
    max_count: usize,
    max_bytes: usize,
}

impl<T> KeptBuffers<T> {
    /// An empty set that keeps at most `max_count` buffers of `max_bytes` in all.
    pub const fn new(max_count: usize, max_bytes: usize) -> Self {
        Self {
            bufs: std::sync::Mutex::new(Vec::new()),
            max_count,
            max_bytes,
        }
    }

    /// The smallest kept buffer with room for `capacity` elements (empty), if any.
    pub fn take(&self, capacity: usize) -> Option<Vec<T>> {
        let mut bufs = self.bufs.lock().unwrap_or_else(|p| p.into_inner());
        let i = bufs
            .iter()
            .enumerate()
            .filter(|(_, v)| v.capacity() >= capacity)
            .min_by_key(|(_, v)| v.capacity())
            .map(|(i, _)| i)?;
        Some(bufs.swap_remove(i))
    }

    /// Keeps `v`, which the caller has wiped, emptied (its length set to 0), when the bounds
    /// allow; frees it otherwise.
    pub fn keep(&self, mut v: Vec<T>) {
        v.clear();
        let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
        if bytes == 0 {
            return;
        }
        let mut bufs = self.bufs.lock().unwrap_or_else(|p| p.into_inner());
        let held: usize = bufs
            .iter()
            .map(|b| b.capacity() * std::mem::size_of::<T>())
            .sum();
        if bufs.len() < self.max_count && held.saturating_add(bytes) <= self.max_bytes {
            bufs.push(v);
        }
    }
}

/// Wiped buffers of at least [`HUGE_MIN_BYTES`] kept for the next [`vec_u64_huge`] (empty, their
/// pages still mapped).
static SPARES: KeptBuffers<u64> = KeptBuffers::new(SPARE_MAX, SPARE_MAX_BYTES);

/// Maps the pages of a buffer of `capacity` words now (zeroed, as a fresh page is) and keeps it
/// for the next [`vec_u64_huge`] that fits, so that the first large batch of a process does not
/// fault its pages in inside a request: on the project's VMs the first touch of memory costs
/// far more than zeroing it (half the CPU of a service's first request of 300 decryptions went
/// to `clear_page`). A no-op below [`HUGE_MIN_BYTES`]; the buffer counts against
/// [`SPARE_MAX_BYTES`] like any kept one (beyond the bounds it is freed).
///
/// # Example
///
/// ```
/// coterie_math::buffers::prefault_u64(1 << 20);
/// let v = coterie_math::buffers::vec_u64_huge(1 << 19);
/// assert!(v.is_empty() && v.capacity() >= 1 << 19);
/// ```
pub fn prefault_u64(capacity: usize) {
    if capacity.saturating_mul(8) < HUGE_MIN_BYTES {
        return;
    }
    let mut v = vec_u64_huge(capacity);
    v.resize(capacity, 0);
    recycle_wiped_u64(v);
}

/// Wipes `v` ([`wipe_u64`] over its length) and keeps its allocation for a later
/// [`vec_u64_huge`] of about its size, instead of returning it to the system.
///
/// A large buffer freed goes back to the kernel (glibc unmaps it), and the next one of its size
/// is faulted in again page by page, each page zeroed by the kernel before the first write: with
/// a batch's gate tables taken from the store into a fresh buffer for every batch, that zeroing
/// was about a fifth of a service node's CPU. A kept buffer skips both. At most [`SPARE_MAX`]
/// buffers and [`SPARE_MAX_BYTES`] wait (the process's peak memory is unchanged; it is only not
/// returned); a smaller buffer, or one beyond those bounds, is wiped and freed.
///
/// `v` must hold every word ever written to it within its length (no truncation without a
/// wipe): the words beyond it are not wiped again.
///
/// # Example
///
/// ```
/// use coterie_math::buffers::{vec_u64_huge, wipe_and_recycle_u64};
/// let mut v = vec_u64_huge(1 << 20);
/// v.resize(1 << 20, 0x5ec2e7);
/// wipe_and_recycle_u64(v);
/// // served from the kept buffer (unless another thread took it first), empty either way
/// let w = vec_u64_huge(1 << 20);
/// assert!(w.is_empty() && w.capacity() >= 1 << 20);
/// ```
pub fn wipe_and_recycle_u64(mut v: Vec<u64>) {
    wipe_u64(&mut v);
    recycle_wiped_u64(v);
}

/// [`wipe_and_recycle_u64`] for a buffer whose every word, within its length, the caller has
/// wiped already (its owner wipes parts as they are used: a second sweep would be wasted). Debug
/// builds check that the words are zero.
///
/// # Example
///
/// ```
/// use coterie_math::buffers::{recycle_wiped_u64, vec_u64_huge, wipe_u64};
/// let mut v = vec_u64_huge(1 << 20);
/// v.resize(1 << 20, 0x5ec2e7);
/// wipe_u64(&mut v[..1 << 19]);
/// wipe_u64(&mut v[1 << 19..]);
/// recycle_wiped_u64(v);
/// ```
pub fn recycle_wiped_u64(mut v: Vec<u64>) {
    debug_assert!(v.iter().all(|&w| w == 0), "a buffer recycled unwiped");
    v.clear();
    if v.capacity().saturating_mul(8) < HUGE_MIN_BYTES {
        return;
    }
    SPARES.keep(v);
}

/// Words [`extend_from_reader_le`] zeroes and reads at a time (64 KiB: they stay in the
/// caches between the two).
pub const READ_PIECE_WORDS: usize = 8 << 10;

/// Appends `words` little-endian 64-bit words read from `r` to `v`: exactly `8 · words` bytes,
/// an error if `r` ends first or fails. The bytes go from the reader straight into `v`'s memory
/// (a file's secret contents need no second buffer to copy from and wipe), in pieces of
/// [`READ_PIECE_WORDS`], each zeroed and then overwritten while it is still in the caches. On
/// an error `v` keeps what was appended, zeros included: its owner wipes it with the rest.
///
/// # Example
///
/// ```
/// let bytes: Vec<u8> = (0..24u8).collect();
/// let mut v = vec![7u64];
/// coterie_math::buffers::extend_from_reader_le(&mut v, &mut &bytes[..], 3).unwrap();
/// assert_eq!(v, [7, 0x0706050403020100, 0x0f0e0d0c0b0a0908, 0x1716151413121110]);
/// // a reader that ends too early is an error
/// assert!(coterie_math::buffers::extend_from_reader_le(&mut v, &mut &bytes[..5], 1).is_err());
/// ```
pub fn extend_from_reader_le(
    v: &mut Vec<u64>,
    r: &mut impl std::io::Read,
    words: usize,
) -> std::io::Result<()> {
    v.reserve(words);
    let mut left = words;
    while left > 0 {
        let k = left.min(READ_PIECE_WORDS);
        let at = v.len();
        v.resize(at + k, 0);
        let piece = &mut v[at..];
        // SAFETY: the bytes of `piece`'s words, exactly: `u8` has alignment 1 and every bit
        // pattern is a valid `u64`, so writing any bytes there leaves valid words.
        #[allow(unsafe_code)]
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(piece.as_mut_ptr().cast::<u8>(), k * 8) };
        r.read_exact(bytes)?;
        if cfg!(target_endian = "big") {
            for w in piece.iter_mut() {
                *w = u64::from_le(*w);
            }
        }
        left -= k;
    }
    Ok(())
}

/// Appends `words` little-endian 64-bit words read from `file` at byte `offset` to `v`, as
/// [`extend_from_reader_le`] does, but on Unix without zeroing the room first: `pread` writes
/// the bytes into `v`'s spare capacity, and the words count once all are read (on a large
/// buffer the zeroing was a pass over memory of its own). An error if the file ends first or a
/// read fails; then the bytes read so far are wiped and `v` is unchanged.
///
/// # Example
///
/// ```
/// let path = std::env::temp_dir().join(format!("coterie-doc-pread-{}", std::process::id()));
/// std::fs::write(&path, (0..24u8).collect::<Vec<_>>()).unwrap();
/// let f = std::fs::File::open(&path).unwrap();
/// let mut v = Vec::new();
/// coterie_math::buffers::extend_from_file_le(&mut v, &f, 8, 2).unwrap();
/// assert_eq!(v, [0x0f0e0d0c0b0a0908, 0x1716151413121110]);
/// assert!(coterie_math::buffers::extend_from_file_le(&mut v, &f, 16, 2).is_err());
/// assert_eq!(v.len(), 2);
/// std::fs::remove_file(&path).unwrap();
/// ```
pub fn extend_from_file_le(
    v: &mut Vec<u64>,
    file: &std::fs::File,
    offset: u64,
    words: usize,
) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let bytes = words
            .checked_mul(8)
            .ok_or_else(|| std::io::Error::other("too many words"))?;
        v.reserve(words);
        let start = v.len();
        let base = v.spare_capacity_mut().as_mut_ptr().cast::<u8>();
        let mut done = 0usize;
        let failed = loop {
            if done == bytes {
                break None;
            }
            let at = match offset.checked_add(done as u64).map(libc::off_t::try_from) {
                Some(Ok(at)) => at,
                _ => break Some(std::io::Error::other("offset out of range")),
            };
            // SAFETY: `base + done .. base + bytes` lies inside `v`'s spare capacity (`reserve`
            // made room for `words` more words past `start`); `pread` writes at most the
            // count it is given there, and nothing else refers to that memory.
            #[allow(unsafe_code)]
            let got = unsafe {
                libc::pread(
                    file.as_raw_fd(),
                    base.add(done).cast::<libc::c_void>(),
                    bytes - done,
                    at,
                )
            };
            match got {
                0 => break Some(std::io::ErrorKind::UnexpectedEof.into()),
                n if n > 0 => done += n as usize,
                _ => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        break Some(e);
                    }
                }
            }
        };
        if let Some(e) = failed {
            // SAFETY: the first `done` bytes of the spare capacity were written by `pread`
            // above, so they are initialized; the slice covers exactly them.
            #[allow(unsafe_code)]
            let read = unsafe { std::slice::from_raw_parts_mut(base, done) };
            wipe_bytes(read);
            return Err(e);
        }
        // SAFETY: all `words` words past `start` were written by `pread` (`done == bytes`), and
        // they lie within the capacity reserved above.
        #[allow(unsafe_code)]
        unsafe {
            v.set_len(start + words)
        };
        if cfg!(target_endian = "big") {
            for w in &mut v[start..] {
                *w = u64::from_le(*w);
            }
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        use std::io::{Seek, SeekFrom};
        let mut f = file;
        f.seek(SeekFrom::Start(offset))?;
        let start = v.len();
        let r = extend_from_reader_le(v, &mut f, words);
        if r.is_err() {
            wipe_u64(&mut v[start..]);
            v.truncate(start);
        }
        r
    }
}

/// `madvise(MADV_HUGEPAGE)` on the whole pages inside `[addr, addr + len)`.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise_huge(addr: usize, len: usize) {
    const PAGE: usize = 4096;
    let start = addr.next_multiple_of(PAGE);
    let end = (addr + len) / PAGE * PAGE;
    if end > start {
        // SAFETY: the range lies inside an allocation this process owns (the vector's capacity);
        // MADV_HUGEPAGE changes only how the kernel backs those pages, never their contents or
        // their mapping, and an error (e.g. a kernel without THP) leaves everything as it was.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

/// Slices shorter than this are wiped with ordinary stores (they are likely still in cache, where
/// non-temporal stores would only evict them).
pub const NT_MIN_BYTES: usize = 16 * 1024;

/// Asks the CPU to bring the cache line holding `x` into the caches ahead of a read (x86-64:
/// `prefetcht0`; a no-op elsewhere). It never faults and changes nothing observable but timing;
/// worth it where the reads of many independent, scattered places are known ahead (gate table
/// entries selected by opened digits: prefetched a few bundles ahead of their use).
///
/// # Example
///
/// ```
/// let table = vec![5u64; 1 << 16];
/// coterie_math::buffers::prefetch(&table[40_000]);
/// assert_eq!(table[40_000], 5);
/// ```
#[inline]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch is a hint: it reads nothing architecturally and cannot fault, and
        // `x` is a valid reference anyway; SSE is part of x86-64.
        #[allow(unsafe_code)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>())
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Overwrites every word of `words` with zero: non-temporal stores for large slices on x86-64,
/// `zeroize` otherwise (see the module docs).
///
/// # Example
///
/// ```
/// let mut secret = vec![0xdead_beef_u64; 100_000];
/// coterie_math::buffers::wipe_u64(&mut secret[3..]);
/// assert!(secret[3..].iter().all(|&w| w == 0));
/// assert_eq!(secret[2], 0xdead_beef);
/// ```
pub fn wipe_u64(words: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if words.len() * 8 >= NT_MIN_BYTES {
        wipe_u64_nt(words);
        return;
    }
    words.zeroize();
}

/// Overwrites every byte of `bytes` with zero, as [`wipe_u64`] does for words.
///
/// # Example
///
/// ```
/// let mut file = vec![7u8; 50_000];
/// coterie_math::buffers::wipe_bytes(&mut file);
/// assert!(file.iter().all(|&b| b == 0));
/// ```
pub fn wipe_bytes(bytes: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= NT_MIN_BYTES {
        // SAFETY: `align_to_mut` only reinterprets whole, 16-byte-aligned elements of the slice;
        // `__m128i` has no invalid bit patterns and every byte of it is a byte of `bytes`.
        #[allow(unsafe_code)]
        let (head, mid, tail) = unsafe { bytes.align_to_mut::<std::arch::x86_64::__m128i>() };
        head.zeroize();
        tail.zeroize();
        nt_zero(mid);
        return;
    }
    bytes.zeroize();
}

/// The non-temporal part of [`wipe_u64`].
#[cfg(target_arch = "x86_64")]
fn wipe_u64_nt(words: &mut [u64]) {
    // the 16-byte-aligned middle of the slice; the ends take ordinary (volatile) stores
    // SAFETY: `align_to_mut` only reinterprets whole, 16-byte-aligned elements of the slice;
    // `__m128i` has no invalid bit patterns and every byte of it is a byte of `words`.
    #[allow(unsafe_code)]
    let (head, mid, tail) = unsafe { words.align_to_mut::<std::arch::x86_64::__m128i>() };
    head.zeroize();
    tail.zeroize();
    nt_zero(mid);
}

/// Zeroes 16-byte vectors (aligned, as their type is) with non-temporal stores, then fences.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn nt_zero(mid: &mut [std::arch::x86_64::__m128i]) {
    use std::arch::x86_64::{_mm_setzero_si128, _mm_sfence, _mm_stream_si128};
    for v in mid.iter_mut() {
        // SAFETY: `v` is one element of `mid`: a valid, 16-byte-aligned `__m128i` (its type's
        // alignment), so the store writes exactly that element; SSE2 is part of x86-64.
        unsafe { _mm_stream_si128(v, _mm_setzero_si128()) };
    }
    // SAFETY: a store fence has no preconditions; SSE2 is part of x86-64.
    unsafe { _mm_sfence() };
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
    std::hint::black_box(&mut *mid);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recycled buffer comes back, empty, for any later request it has room for (the
    /// smallest such buffer when several wait), never for a larger one; a fresh buffer is
    /// rounded up to its size class; small buffers are not kept. (The spares are process-wide:
    /// the sizes here are used by no other test, and other tests' spares are smaller.)
    /// Held by the tests that take or keep large buffers, so that one does not take another's
    /// spare between its steps.
    static LARGE: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn recycled_buffers_are_reused_best_fit() {
        let _one = LARGE.lock().unwrap_or_else(|p| p.into_inner());
        let class = (HUGE_MIN_BYTES / 8) * 16;
        let words = class / 2 + 12_345;
        let mut v = vec_u64_huge(words);
        assert_eq!(v.capacity(), class);
        v.resize(words, u64::MAX);
        let at = v.as_ptr();
        wipe_and_recycle_u64(v);
        // larger than the buffer: a fresh allocation of the next class
        let big = vec_u64_huge(class + 1);
        assert_ne!(big.as_ptr(), at);
        assert_eq!(big.capacity(), 2 * class);
        // more than the buffer held, within its room: the same allocation, empty
        let again = vec_u64_huge(class - 1000);
        assert_eq!(again.as_ptr(), at);
        assert!(again.is_empty() && again.capacity() == class);
        // two kept: a small request takes the smaller of the two that fit
        recycle_wiped_u64(again);
        recycle_wiped_u64(big);
        let small = vec_u64_huge(class / 4);
        assert_eq!(small.as_ptr(), at);
        drop(small);
        // a buffer below the huge-page size is freed, not kept
        let mut tiny = vec_u64_huge(1000);
        tiny.resize(1000, 1);
        wipe_and_recycle_u64(tiny);
        let spares = SPARES.bufs.lock().unwrap();
        assert!(spares.iter().all(|s| s.capacity() * 8 >= HUGE_MIN_BYTES));
    }

    /// Words read across several pieces equal the bytes' little-endian words; a short reader
    /// fails and leaves what it appended for the owner to wipe.
    #[test]
    fn words_read_from_a_reader_match_the_bytes() {
        use rand::Rng;
        let n = READ_PIECE_WORDS * 2 + 77;
        let mut bytes = vec![0u8; n * 8];
        rand::rng().fill_bytes(&mut bytes);
        let mut v = vec_u64_huge(n + 1);
        v.push(42);
        extend_from_reader_le(&mut v, &mut &bytes[..], n).unwrap();
        assert_eq!(v.len(), n + 1);
        assert_eq!(v[0], 42);
        for (w, b) in v[1..].iter().zip(bytes.chunks_exact(8)) {
            assert_eq!(*w, u64::from_le_bytes(b.try_into().unwrap()));
        }
        let mut short = Vec::new();
        let e = extend_from_reader_le(&mut short, &mut &bytes[..READ_PIECE_WORDS * 8 + 9], n);
        assert_eq!(e.unwrap_err().kind(), std::io::ErrorKind::UnexpectedEof);
        assert!(short.len() >= READ_PIECE_WORDS && short.len() <= n);
        wipe_and_recycle_u64(v);
    }

    /// Words read from a file at an offset, across pieces, equal the file's little-endian
    /// words; a file too short fails and leaves the vector as it was.
    #[test]
    fn words_read_from_a_file_match_its_bytes() {
        use rand::Rng;
        let n = READ_PIECE_WORDS * 2 + 77;
        let mut bytes = vec![0u8; n * 8 + 5];
        rand::rng().fill_bytes(&mut bytes);
        let path = std::env::temp_dir().join(format!(
            "coterie-buffers-pread-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&path, &bytes).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let mut v = vec![42u64];
        extend_from_file_le(&mut v, &f, 5, n).unwrap();
        assert_eq!(v.len(), n + 1);
        assert_eq!(v[0], 42);
        for (w, b) in v[1..].iter().zip(bytes[5..].chunks_exact(8)) {
            assert_eq!(*w, u64::from_le_bytes(b.try_into().unwrap()));
        }
        let e = extend_from_file_le(&mut v, &f, 6, n).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
        assert_eq!(v.len(), n + 1);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn wipes_exactly_the_slice_at_every_alignment_and_length() {
        let mut buf = vec![u64::MAX; 6000];
        for start in 0..3 {
            for len in [0usize, 1, 2, 3, 2047, 2048, 2049, 4000, 5997] {
                buf.fill(u64::MAX);
                wipe_u64(&mut buf[start..start + len]);
                assert!(
                    buf[start..start + len].iter().all(|&w| w == 0),
                    "{start} {len}"
                );
                assert!(buf[..start].iter().all(|&w| w == u64::MAX));
                assert!(buf[start + len..].iter().all(|&w| w == u64::MAX));
            }
        }
    }

    #[test]
    fn agrees_with_zeroize_on_random_content() {
        use rand::Rng;
        let mut rng = rand::rng();
        let mut a: Vec<u64> = (0..9001).map(|_| rng.next_u64()).collect();
        let mut b = a.clone();
        wipe_u64(&mut a[1..]);
        b[1..].zeroize();
        assert_eq!(a, b);
    }

    #[test]
    fn huge_vectors_hold_what_is_written() {
        let _one = LARGE.lock().unwrap_or_else(|p| p.into_inner());
        for cap in [0usize, 10, HUGE_MIN_BYTES / 8 - 1, HUGE_MIN_BYTES / 8 + 3] {
            let mut v = vec_u64_huge(cap);
            assert!(v.capacity() >= cap);
            v.extend((0..cap as u64).map(|i| i ^ 0x5555));
            assert!(v.iter().enumerate().all(|(i, &w)| w == i as u64 ^ 0x5555));
            wipe_u64(&mut v);
            assert!(v.iter().all(|&w| w == 0));
        }
    }

    #[test]
    fn wipes_bytes_exactly_at_every_alignment() {
        let mut buf = vec![0xAAu8; 40_000];
        for start in 0..17 {
            for len in [
                0usize,
                5,
                NT_MIN_BYTES - 1,
                NT_MIN_BYTES,
                NT_MIN_BYTES + 9,
                39_000,
            ] {
                buf.fill(0xAA);
                wipe_bytes(&mut buf[start..start + len]);
                assert!(
                    buf[start..start + len].iter().all(|&b| b == 0),
                    "{start} {len}"
                );
                assert!(buf[..start].iter().all(|&b| b == 0xAA));
                assert!(buf[start + len..].iter().all(|&b| b == 0xAA));
            }
        }
    }
}
