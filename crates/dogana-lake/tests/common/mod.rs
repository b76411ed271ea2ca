//! What the lake's SIGKILL harnesses share (tests/crash_ops.rs, tests/sync_crash.rs): the
//! kill delays, copies of a store's tree, and killing a child midway through its run.

use std::path::Path;
use std::process::Child;
use std::time::Duration;

/// A small xorshift, seeded from the clock (the seed is printed): the kill delays.
pub struct Rng(u64);

impl Rng {
    pub fn new() -> Rng {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        eprintln!("crash seed {seed}");
        Rng(seed | 1)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }

    /// SIGKILLs `child` after a random delay in the second half of `whole` (a run's time:
    /// its first half is mostly the process starting), and reaps it.
    pub fn kill_midway(&mut self, mut child: Child, whole: Duration) {
        let w = whole.as_micros() as u64;
        std::thread::sleep(Duration::from_micros(w / 2 + self.below(w / 2 + 1)));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
    }
}

/// Replaces `to` with a copy of the tree at `from`.
pub fn copy_tree(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}
