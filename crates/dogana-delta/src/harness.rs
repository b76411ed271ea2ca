//! The conformance suite's view of a Delta store (`dogana_receiver::conformance`): a store in
//! a folder (`file://`) or in memory, a second handle, and damage done behind the engine's
//! back (each one Delta commit that keeps dogana's head, so the engine reads what it finds).

use std::path::Path;

use dogana_lake::layout::ColumnDef;
use dogana_receiver::conformance::{Damage, Harness};
use dogana_receiver::{Backend, Datum, Open, StoreError, Txn};

use dogana::Wire;

use crate::Delta;

fn url_of(dir: &Path) -> String {
    format!("delta+file://{}", dir.join("store").display())
}

fn damage(d: &mut Delta, table: &str, damage: Damage) -> Result<(), String> {
    let e = |e: StoreError| e.to_string();
    match damage {
        Damage::DeleteRow(id) => {
            d.begin(Txn::Write, &[table]).map_err(e)?;
            d.damage_rows(table, &id).map_err(e)?;
        }
        Damage::Ledger(ledger) => {
            d.begin(Txn::Write, &[table]).map_err(e)?;
            d.save_ledger(table, &ledger.to_json()).map_err(e)?;
        }
        Damage::DeleteReceipt(seq) => {
            d.begin(Txn::Write, &[table]).map_err(e)?;
            d.damage_receipt(table, seq).map_err(e)?;
        }
        Damage::ForeignTable(name) => {
            // a Delta table an application made: no dogana head
            d.begin(Txn::Write, &[&name]).map_err(e)?;
            d.damage_foreign(
                &name,
                ColumnDef {
                    name: "id".into(),
                    ty: Some("int".into()),
                    key: false,
                },
                vec![vec![Datum::Int(1)]],
            )
            .map_err(e)?;
        }
    }
    d.commit().map_err(e)
}

impl Harness for Delta {
    fn create(dir: &Path) -> Result<Delta, String> {
        Delta::open(Path::new(&url_of(dir)), &(), true).map_err(|e| e.to_string())
    }

    fn reopen(&self) -> Result<Delta, String> {
        Delta::reopen(self).map_err(|e| e.to_string())
    }

    fn damage(&mut self, table: &str, d: Damage) -> Result<(), String> {
        damage(self, table, d)
    }
}

/// A Delta store on `memory://`: every handle this process opens on one name shares it.
#[derive(Debug)]
pub struct MemoryDelta(pub Delta);

dogana_receiver::delegate_backend!(MemoryDelta, Delta);

impl Harness for MemoryDelta {
    fn create(dir: &Path) -> Result<MemoryDelta, String> {
        let url = format!("delta+memory://test{}", dir.display());
        Delta::open_url(&url, true)
            .map(MemoryDelta)
            .map_err(|e| e.to_string())
    }

    fn reopen(&self) -> Result<MemoryDelta, String> {
        self.0.reopen().map(MemoryDelta).map_err(|e| e.to_string())
    }

    fn damage(&mut self, table: &str, d: Damage) -> Result<(), String> {
        damage(&mut self.0, table, d)
    }
}

/// A Delta store on an S3 server: `delta+$DOGANA_LAKE_S3_URL/<test folder>` (`AWS_*` from
/// the environment; scripts/test-lake.sh starts moto and names it).
#[derive(Debug)]
pub struct S3Delta(pub Delta);

impl Harness for S3Delta {
    fn create(dir: &Path) -> Result<S3Delta, String> {
        let url = dogana_lake::cloud_url("DOGANA_LAKE_S3_URL", dir)?;
        Delta::open_url(&format!("delta+{url}"), true)
            .map(S3Delta)
            .map_err(|e| e.to_string())
    }

    fn reopen(&self) -> Result<S3Delta, String> {
        self.0.reopen().map(S3Delta).map_err(|e| e.to_string())
    }

    fn damage(&mut self, table: &str, d: Damage) -> Result<(), String> {
        damage(&mut self.0, table, d)
    }

    fn copy_store(from: &Path, to: &Path) -> Result<(), String> {
        dogana_lake::copy_objects(
            &dogana_lake::cloud_url("DOGANA_LAKE_S3_URL", from)?,
            &dogana_lake::cloud_url("DOGANA_LAKE_S3_URL", to)?,
        )
    }
}

dogana_receiver::delegate_backend!(S3Delta, Delta);
