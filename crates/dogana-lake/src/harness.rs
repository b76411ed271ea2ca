//! What the engine's conformance, crash and concurrency suites need of the lake beyond the
//! port: [`Lake`] keeps a test's store in `file://<dir>/lake`, [`MemoryLake`] in
//! `memory://<dir>` (the same store for every handle of this process).

use std::path::Path;

use dogana::Wire;
use dogana_receiver::conformance::{Damage, Harness};
use dogana_receiver::{
    Backend, Batch, Datum, KeysOutside, Layout, Open, ReceiptRow, Step, StoreError, Txn,
};

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

/// Replaces folder `to` with a copy of folder `from`, subfolders too: a `file://` lake is a
/// tree of objects.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).map_err(|e| format!("creating {}: {e}", to.display()))?;
    let entries =
        std::fs::read_dir(from).map_err(|e| format!("reading {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let ty = entry.file_type().map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if ty.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if ty.is_file() {
            std::fs::copy(entry.path(), &target)
                .map_err(|e| format!("copying {}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
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

    fn copy_store(from: &Path, to: &Path) -> Result<(), String> {
        copy_tree(from, to)
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

    fn copy_store(from: &Path, to: &Path) -> Result<(), String> {
        copy_tree(from, to)
    }
}

/// The store a test folder names on a server root: the root's URL from the environment
/// variable `env` (scripts/test-lake.sh sets it), then the folder as one path segment, so every
/// process that opens one folder (the crash child, a second writer) opens the same store.
fn cloud_url(env: &str, dir: &Path) -> Result<String, String> {
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
fn copy_objects(from: &str, to: &str) -> Result<(), String> {
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

        delegate_backend!($t);
    };
}

/// The port, delegated to the lake inside.
macro_rules! delegate_backend {
    ($t:ty) => {
        impl Backend for $t {
            const TEXT_TIMES: bool = Lake::TEXT_TIMES;

            fn begin(&mut self, txn: Txn, tables: &[&str]) -> Result<(), StoreError> {
                self.0.begin(txn, tables)
            }
            fn commit(&mut self) -> Result<(), StoreError> {
                self.0.commit()
            }
            fn rollback(&mut self) {
                self.0.rollback()
            }
            fn ledger(&mut self, table: &str) -> Result<Option<String>, StoreError> {
                self.0.ledger(table)
            }
            fn keeps_ledger_rows(&self) -> bool {
                self.0.keeps_ledger_rows()
            }
            fn ledger_identity(&mut self, table: &str) -> Result<Option<String>, StoreError> {
                self.0.ledger_identity(table)
            }
            fn save_ledger_rows(
                &mut self,
                table: &str,
                identity: &str,
                rows: &dogana::LedgerRows,
            ) -> Result<(), StoreError> {
                self.0.save_ledger_rows(table, identity, rows)
            }
            fn accepted_receipt(
                &mut self,
                table: &str,
                m: &str,
            ) -> Result<Option<String>, StoreError> {
                self.0.accepted_receipt(table, m)
            }
            fn receipts(&mut self, table: &str) -> Result<Vec<ReceiptRow>, StoreError> {
                self.0.receipts(table)
            }
            fn tables(&mut self) -> Result<Vec<String>, StoreError> {
                self.0.tables()
            }
            fn published_columns(
                &mut self,
                table: &str,
            ) -> Result<Option<Vec<String>>, StoreError> {
                self.0.published_columns(table)
            }
            fn stage_create(&mut self, table: &str, layout: &Layout) -> Result<(), StoreError> {
                self.0.stage_create(table, layout)
            }
            fn stage_batch(
                &mut self,
                t: &str,
                layout: &Layout,
                batch: &Batch,
            ) -> Result<(), StoreError> {
                self.0.stage_batch(t, layout, batch)
            }
            fn stage_clear(&mut self, table: &str) -> Result<(), StoreError> {
                self.0.stage_clear(table)
            }
            fn keys_outside(
                &mut self,
                table: &str,
                q: &KeysOutside<'_>,
            ) -> Result<(u64, Option<Vec<Datum>>), StoreError> {
                self.0.keys_outside(table, q)
            }
            fn execute(&mut self, table: &str, step: Step<'_>) -> Result<(), StoreError> {
                self.0.execute(table, step)
            }
            fn save_ledger(&mut self, table: &str, document: &str) -> Result<(), StoreError> {
                self.0.save_ledger(table, document)
            }
            fn save_receipt(&mut self, table: &str, r: &dogana::Receipt) -> Result<(), StoreError> {
                self.0.save_receipt(table, r)
            }
            fn read_rows(
                &mut self,
                t: &str,
                columns: &[String],
            ) -> Result<Vec<Vec<Datum>>, StoreError> {
                self.0.read_rows(t, columns)
            }
            fn group_of(&mut self, table: &str) -> Result<Option<Vec<String>>, StoreError> {
                self.0.group_of(table)
            }
            fn save_group(&mut self, tables: &[String]) -> Result<(), StoreError> {
                self.0.save_group(tables)
            }
        }
    };
}

delegate_backend!(MemoryLake);
delegate_backend!(ShortLeaseLake);

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
