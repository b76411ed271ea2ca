//! The staging folder: uploads are streamed here before the engine reads them.
//!
//! Each running service owns one folder under the staging root, `serve-PID-NONCE/`, and holds
//! an exclusive `flock(2)` on its `.lock` file for as long as it runs; the kernel releases the
//! lock when the process dies, however it dies. At start a service removes every folder whose
//! lock it can take: what a killed service left half-uploaded. Several services may share one
//! root (the default one in the system's temporary folder) without touching each other's
//! uploads.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A service's own staging folder, locked while this value lives.
pub(crate) struct Staging {
    dir: PathBuf,
    _lock: File,
}

/// How old a folder being set up (`.serve-*`, not yet locked and renamed) must be before it
/// counts as left over by a process that died setting it up.
const SETUP_GRACE: Duration = Duration::from_secs(3600);

impl Staging {
    /// Sweeps what stopped services left under `root`, then takes a folder of this process's
    /// own (locked before it has the name a sweep looks for).
    pub(crate) fn claim(root: &Path) -> io::Result<Staging> {
        std::fs::create_dir_all(root)?;
        let swept = sweep(root)?;
        if swept > 0 {
            tracing::info!(
                folders = swept,
                root = %root.display(),
                "removed the staging folders of services that stopped mid-upload"
            );
        }
        let nonce = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!("serve-{}-{nonce}", std::process::id());
        let setup = root.join(format!(".{name}"));
        std::fs::create_dir(&setup)?;
        let lock = File::create(setup.join(".lock"))?;
        lock.lock()?;
        let dir = root.join(name);
        // the lock is on the file, not its path: it holds across the rename
        std::fs::rename(&setup, &dir)?;
        Ok(Staging { dir, _lock: lock })
    }

    /// The folder uploads go to.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Removes every `serve-*` folder whose lock is free (its service is gone) and every `.serve-*`
/// folder older than [`SETUP_GRACE`]; returns how many went.
fn sweep(root: &Path) -> io::Result<usize> {
    let mut swept = 0;
    for entry in std::fs::read_dir(root)? {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let path = entry.path();
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let gone = if name.starts_with("serve-") {
            match File::open(path.join(".lock")) {
                Ok(lock) => lock.try_lock().is_ok(),
                Err(e) if e.kind() == io::ErrorKind::NotFound => true,
                Err(e) => return Err(e),
            }
        } else if name.starts_with(".serve-") {
            entry
                .metadata()?
                .modified()?
                .elapsed()
                .is_ok_and(|age| age > SETUP_GRACE)
        } else {
            false
        };
        if gone && std::fs::remove_dir_all(&path).is_ok() {
            swept += 1;
        }
    }
    Ok(swept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_whose_service_is_gone_is_swept_and_a_live_one_is_not() {
        let root = tempfile::tempdir().unwrap();
        let live = Staging::claim(root.path()).unwrap();
        std::fs::write(live.dir().join(".upload-1"), b"half").unwrap();
        // a folder left by a killed service: its lock file is there, unlocked
        let dead = root.path().join("serve-1-1");
        std::fs::create_dir(&dead).unwrap();
        File::create(dead.join(".lock")).unwrap();
        std::fs::write(dead.join(".upload-2"), b"half").unwrap();

        let second = Staging::claim(root.path()).unwrap();
        assert!(!dead.exists(), "the dead service's uploads are removed");
        assert!(
            live.dir().join(".upload-1").exists(),
            "a running service's upload is left alone"
        );
        assert_ne!(live.dir(), second.dir());
        let dir = second.dir().to_owned();
        drop(second);
        assert!(!dir.exists(), "a service that stops removes its folder");
    }
}
