//! `buffers::keep_freed_heap` in a process of its own (the policy is process-wide): a freed
//! block of a few megabytes is reused without being faulted in again.

/// Minor page faults of the calling thread so far (`getrusage(RUSAGE_THREAD)`; it allocates
/// nothing, which matters here: a small allocation between the blocks changes the heap's layout).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn thread_minor_faults() -> i64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `u` is a valid, writable `rusage`; getrusage only writes into it.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, u.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage failed");
    // SAFETY: zero-initialized and filled by getrusage; every field is a plain integer.
    #[allow(unsafe_code)]
    let u = unsafe { u.assume_init() };
    u.ru_minflt
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_freed_block_is_reused_without_new_page_faults() {
    assert!(coterie_math::buffers::keep_freed_heap());
    const LEN: usize = 8 << 20; // 2,048 pages of 4 KiB
    // black_box: otherwise the compiler may drop the writes to a block that is freed unread
    let first = std::hint::black_box(vec![1u8; LEN]);
    drop(first);
    let before = thread_minor_faults();
    let second = std::hint::black_box(vec![2u8; LEN]);
    let faults = thread_minor_faults() - before;
    assert_eq!(second[LEN / 2], 2);
    // without the policy glibc maps the block afresh and unmaps it when freed: about 2,048
    // faults for the second block (checked by leaving out the call above)
    assert!(
        faults < 256,
        "{faults} minor faults for a block of 2,048 pages freed just before"
    );
}
