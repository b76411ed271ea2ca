//! What the engine's conformance, crash and concurrency suites need of the lake beyond the
//! port: [`Lake`] keeps a test's store in `file://<dir>/lake`, [`MemoryLake`] in
//! `memory://<dir>` (the same store for every handle of this process).

use std::path::Path;

use dogana::Wire;
use dogana_receiver::conformance::{Damage, Harness};
use dogana_receiver::{Backend, Datum, Open, StoreError, Txn};

use crate::layout::{receipt_seq_prefix, ColumnDef};
use crate::{Lake, LakeOptions};

fn damage(lake: &mut Lake, table: &str, damage: Damage) -> Result<(), String> {
    let e = |e: StoreError| e.to_string();
    match damage {
        Damage::DeleteReceipt(seq) => {
            let root = lake.root().clone();
            for key in root
                .list(&receipt_seq_prefix(table, seq as u64))
                .map_err(|e| e.to_string())?
            {
                root.delete(&key).map_err(|e| e.to_string())?;
            }
            return Ok(());
        }
        Damage::DeleteRow(id) => {
            lake.begin(Txn::Write, &[table]).map_err(e)?;
            lake.with_table(table, |rows, _, _| {
                rows.retain(|r| r.first().and_then(Datum::render).as_deref() != Some(id.as_str()))
            })
            .map_err(e)?;
        }
        Damage::Ledger(ledger) => {
            lake.begin(Txn::Write, &[table]).map_err(e)?;
            lake.with_table(table, |_, _, l| {
                *l = crate::backend::StoredLedger::Whole(ledger.to_json())
            })
            .map_err(e)?;
        }
        Damage::ForeignTable(name) => {
            lake.begin(Txn::Write, &[&name]).map_err(e)?;
            lake.with_table(&name, |rows, cols, _| {
                *cols = Some(vec![ColumnDef {
                    name: "id".into(),
                    ty: Some("int".into()),
                    key: false,
                }]);
                *rows = vec![vec![Datum::Int(1)]];
            })
            .map_err(e)?;
        }
    }
    lake.commit().map_err(e)
}

impl Harness for Lake {
    fn create(dir: &Path) -> Result<Lake, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        Lake::open(&dir.join("lake"), &LakeOptions::default(), true).map_err(|e| e.to_string())
    }

    fn reopen(&self) -> Result<Lake, String> {
        self.try_clone().map_err(|e| e.to_string())
    }

    fn damage(&mut self, table: &str, d: Damage) -> Result<(), String> {
        damage(self, table, d)
    }
}

/// The lake on `memory://`: every handle this process opens on one name shares its objects.
#[derive(Debug)]
pub struct MemoryLake(pub Lake);

impl Harness for MemoryLake {
    fn create(dir: &Path) -> Result<MemoryLake, String> {
        let url = format!("memory://test{}", dir.display());
        Lake::open(Path::new(&url), &LakeOptions::default(), true)
            .map(MemoryLake)
            .map_err(|e| e.to_string())
    }

    fn reopen(&self) -> Result<MemoryLake, String> {
        self.0
            .try_clone()
            .map(MemoryLake)
            .map_err(|e| e.to_string())
    }

    fn damage(&mut self, table: &str, d: Damage) -> Result<(), String> {
        damage(&mut self.0, table, d)
    }
}

/// The lake on `file://<dir>/lake` with 300 ms leases, for the crash harness: a writer
/// killed while holding a lease delays the next one by at most that.
#[derive(Debug)]
pub struct ShortLeaseLake(pub Lake);

impl Harness for ShortLeaseLake {
    fn create(dir: &Path) -> Result<ShortLeaseLake, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let options = LakeOptions {
            lease_ttl: std::time::Duration::from_millis(300),
            ..LakeOptions::default()
        };
        Lake::open(&dir.join("lake"), &options, true)
            .map(ShortLeaseLake)
            .map_err(|e| e.to_string())
    }

    fn reopen(&self) -> Result<ShortLeaseLake, String> {
        self.0
            .try_clone()
            .map(ShortLeaseLake)
            .map_err(|e| e.to_string())
    }

    fn damage(&mut self, table: &str, d: Damage) -> Result<(), String> {
        damage(&mut self.0, table, d)
    }
}

/// The store a test folder names on a server root: the root's URL from the environment
/// variable `env` (scripts/test-lake.sh sets it), then the folder as one path segment, so every
/// process that opens one folder (the crash child, a second writer) opens the same store.
/// The URL under the server root `$env` names (scripts/test-lake.sh) of a test's folder `dir`.
pub fn cloud_url(env: &str, dir: &Path) -> Result<String, String> {
    let base = std::env::var(env)
        .map_err(|_| format!("{env} names the server's root (scripts/test-lake.sh)"))?;
    let segment: String = dir
        .display()
        .to_string()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Ok(format!("{}/{segment}", base.trim_end_matches('/')))
}

/// Replaces the store at `to` with a copy of every object of the store at `from` (both
/// object-store roots): the crash harness's snapshots of a server's store. Lists and copies
/// object by object; the copy's pointers get new versions, which a fresh open reads anew.
pub fn copy_objects(from: &str, to: &str) -> Result<(), String> {
    let e = |e: crate::LakeError| e.to_string();
    let src = crate::objects::Root::open(from).map_err(e)?;
    let dst = crate::objects::Root::open(to).map_err(e)?;
    for key in dst.list("").map_err(e)? {
        dst.delete(&key).map_err(e)?;
    }
    for key in src.list("").map_err(e)? {
        let bytes = src
            .get(&key)
            .map_err(e)?
            .ok_or_else(|| format!("{from}: {key} vanished while being copied"))?;
        dst.put(&key, bytes).map_err(e)?;
    }
    Ok(())
}

macro_rules! cloud_harness {
    ($(#[$doc:meta])* $t:ident, $env:literal, $ttl:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $t(pub Lake);

        impl Harness for $t {
            fn create(dir: &Path) -> Result<$t, String> {
                let url = cloud_url($env, dir)?;
                let ttl: Option<std::time::Duration> = $ttl;
                let options = LakeOptions {
                    lease_ttl: ttl.unwrap_or(LakeOptions::default().lease_ttl),
                    ..LakeOptions::default()
                };
                Lake::open(Path::new(&url), &options, true)
                    .map($t)
                    .map_err(|e| e.to_string())
            }

            fn reopen(&self) -> Result<$t, String> {
                self.0.try_clone().map($t).map_err(|e| e.to_string())
            }

            fn damage(&mut self, table: &str, d: Damage) -> Result<(), String> {
                damage(&mut self.0, table, d)
            }

            fn copy_store(from: &Path, to: &Path) -> Result<(), String> {
                copy_objects(&cloud_url($env, from)?, &cloud_url($env, to)?)
            }
        }

        dogana_receiver::delegate_backend!($t, Lake);
    };
}

dogana_receiver::delegate_backend!(MemoryLake, Lake);
dogana_receiver::delegate_backend!(ShortLeaseLake, Lake);

cloud_harness!(
    /// The lake on an S3 server: `$DOGANA_LAKE_S3_URL/<test folder>` (`AWS_*` from the
    /// environment).
    S3Lake,
    "DOGANA_LAKE_S3_URL",
    None
);
cloud_harness!(
    /// The lake on Azure blob storage (Azurite): `$DOGANA_LAKE_AZ_URL/<test folder>`
    /// (`AZURE_*` from the environment).
    AzureLake,
    "DOGANA_LAKE_AZ_URL",
    None
);
cloud_harness!(
    /// The lake on an S3 server with 2 s leases, for the crash harness (a killed writer's
    /// lease delays the next one by at most that; S3's Last-Modified has a resolution of a
    /// second, so shorter leases would read as lapsed early).
    ShortLeaseS3Lake,
    "DOGANA_LAKE_S3_URL",
    Some(std::time::Duration::from_secs(2))
);
cloud_harness!(
    /// The lake on Azure blob storage (Azurite) with 2 s leases, for the crash harness.
    ShortLeaseAzureLake,
    "DOGANA_LAKE_AZ_URL",
    Some(std::time::Duration::from_secs(2))
);
