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

/// Minor faults for a block of 8 MiB (2,048 pages) allocated right after one of the same size
/// was written and freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn faults_for_a_block_freed_before() -> i64 {
    const LEN: usize = 8 << 20;
    // black_box: otherwise the compiler may drop the writes to a block that is freed unread
    let first = std::hint::black_box(vec![1u8; LEN]);
    drop(first);
    let before = thread_minor_faults();
    let second = std::hint::black_box(vec![2u8; LEN]);
    let faults = thread_minor_faults() - before;
    assert_eq!(second[LEN / 2], 2);
    faults
}

const CHILD: &str = "COTERIE_KEEP_FREED_HEAP_TEST_CHILD";

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_freed_block_is_reused_without_new_page_faults() {
    if std::env::var_os(CHILD).is_some() {
        return; // the child process of the next test runs only that test
    }
    if std::env::var("COTERIE_KEEP_FREED_HEAP").is_ok_and(|v| v == "0") {
        // the suite itself runs with the policy turned off: the next test covers that
        assert!(!coterie_math::buffers::keep_freed_heap());
        return;
    }
    assert!(coterie_math::buffers::keep_freed_heap());
    let faults = faults_for_a_block_freed_before();
    assert!(
        faults < 256,
        "{faults} minor faults for a block of 2,048 pages freed just before"
    );
}

/// `COTERIE_KEEP_FREED_HEAP=0` leaves glibc's defaults: this test runs itself again in a child
/// process with the variable set, where the block is faulted in afresh.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_variable_turns_the_policy_off() {
    if std::env::var_os(CHILD).is_some() {
        assert!(!coterie_math::buffers::keep_freed_heap());
        let faults = faults_for_a_block_freed_before();
        assert!(
            faults > 1500,
            "only {faults} minor faults without the policy"
        );
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "the_variable_turns_the_policy_off",
            "--test-threads",
            "1",
        ])
        .env(CHILD, "1")
        .env("COTERIE_KEEP_FREED_HEAP", "0")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
