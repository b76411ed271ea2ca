//! Folds (`store.fold.*`): merging a table's small parts by size tier under its lease, and
//! the fold after a delivery. Moved out of `backend.rs`, whose private state it shares.

use super::*;

impl Lake {
    /// Folds `table` under its compaction lease (the table's write lease): merges 4 parts of
    /// one size tier into one until every tier holds fewer than 4 (`store.fold.tiered-merge`),
    /// carries every other part by reference (`store.fold.carry-by-reference`) and publishes
    /// a snapshot with the same rows, ledger and receipts, its lease's fence stamped in the
    /// manifest and the pointer (`store.fold.compaction-lease`), by the one conditional write
    /// of the pointer (`store.fold.pointer-commit`). A fold the tiers ask nothing of releases
    /// the lease and writes nothing. A key column stored as `float` is
    /// [`LakeError::StoreKeyWidened`] and nothing is written.
    pub fn fold(&mut self, table: &str) -> Result<FoldReport, StoreError> {
        if self.read_pointer(table)?.is_none() {
            // no such table: nothing to fold, and no lease (a pointer) is created for it
            return Ok(FoldReport {
                table: table.to_owned(),
                parts_before: 0,
                parts_after: 0,
                merges: 0,
                rewritten: 0,
                bytes_merged: 0,
                bytes_written: 0,
                snapshot: None,
                fence: 0,
            });
        }
        self.begin(Txn::Write, &[table])?;
        let r = self.fold_leased(table);
        match &r {
            Ok(report) if report.snapshot.is_some() => {
                self.commit()?;
            }
            _ => self.rollback(),
        }
        r
    }

    fn fold_leased(&mut self, table: &str) -> Result<FoldReport, StoreError> {
        let t = self
            .tables
            .get(table)
            .cloned()
            .ok_or_else(|| corrupt("no table"))?;
        let fence = t.fence.unwrap_or(0);
        let mut report = FoldReport {
            table: table.to_owned(),
            parts_before: t.parts.len(),
            parts_after: t.parts.len(),
            merges: 0,
            rewritten: 0,
            bytes_merged: 0,
            bytes_written: 0,
            snapshot: None,
            fence,
        };
        let Some(columns) = t.columns.clone() else {
            return Ok(report);
        };
        // rule: store.reconcile.key-widening — a fold meeting a key already reconciled to
        // Float64 refuses, before it writes anything
        if let Some(c) = columns
            .iter()
            .find(|c| c.key && LakeType::of_declared(c.ty.as_deref()) == Some(LakeType::Float))
        {
            return Err(LakeError::StoreKeyWidened {
                table: table.to_owned(),
                column: cut(&c.name),
                stored: "float".into(),
                arriving: "a fold's merge".into(),
            }
            .into());
        }
        // the row parts (deletion parts take no part in the tiers)
        let row_parts: Vec<usize> = (0..t.parts.len())
            .filter(|i| !t.parts[*i].is_deletes())
            .collect();
        // which rows of each part are current (None: all, the parts are disjoint)
        let current = if t.overlapping {
            Some(self.current_flags(&t, &columns)?)
        } else {
            None
        };
        let shadowed = |i: usize| -> usize {
            current
                .as_ref()
                .map_or(0, |c| c[i].iter().filter(|x| !**x).count())
        };
        // a part a quarter or more of whose rows are shadowed is rewritten with its current
        // rows (alone, when no merge takes it): a part is rewritten only after a quarter of
        // its size was delivered again, so this adds at most 4x to the write amplification
        let stale = |i: usize| {
            let n = shadowed(i);
            n > 0 && 4 * n as u64 >= t.parts[i].len()
        };
        // each row part as it will stand if no merge takes it (a stale one rewritten to its
        // current rows), and its current rows: a merge keeps only those, so the tiers
        // planned are the tiers the fold leaves
        let sizes: Vec<(u64, u64)> = row_parts
            .iter()
            .map(|i| {
                let current = t.parts[*i].len() - shadowed(*i) as u64;
                (
                    if stale(*i) {
                        current
                    } else {
                        t.parts[*i].len()
                    },
                    current,
                )
            })
            .collect();
        let merges = plan_merges_of(&sizes);
        // which row parts each merged part is made of (positions in `t.parts`)
        let mut groups: Vec<Vec<usize>> = row_parts.iter().map(|i| vec![*i]).collect();
        for m in &merges {
            let merged: Vec<usize> = m.iter().flat_map(|i| groups[*i].clone()).collect();
            for i in m.iter().rev() {
                groups.remove(*i);
            }
            groups.insert(m[0], merged);
        }
        let merged: Vec<Vec<usize>> = groups.into_iter().filter(|g| g.len() > 1).collect();
        let rewrite: Vec<usize> = row_parts
            .iter()
            .copied()
            .filter(|i| !merged.iter().flatten().any(|m| m == i))
            .filter(|i| stale(*i))
            .collect();
        if merges.is_empty() && rewrite.is_empty() {
            return Ok(report);
        }
        // on a lazy store the inputs come through the part cache, all at once or not at all
        // (store.fold.cached-inputs)
        let inputs: Vec<(String, u64)> = merged
            .iter()
            .flatten()
            .chain(rewrite.iter())
            .filter_map(|i| match &t.parts[*i] {
                Part::Ref(r) => Some((r.path.clone(), r.bytes)),
                _ => None,
            })
            .collect();
        self.root.hydrate(table, &inputs)?;
        // A merged part holds its members' current rows and takes the place of its newest
        // member: a shadowed row is dropped (a later part holds its key), a current one stays
        // after every part holding an older copy of its key, and no part after it holds that
        // key — so every row that was current stays current, and nothing else becomes so. A
        // rewritten part keeps its place and its current rows.
        let current_of = |i: usize, rows: Vec<Vec<Datum>>| -> Vec<Vec<Datum>> {
            match &current {
                None => rows,
                Some(c) => rows
                    .into_iter()
                    .zip(&c[i])
                    .filter(|(_, keep)| **keep)
                    .map(|(r, _)| r)
                    .collect(),
            }
        };
        let mut out = Vec::with_capacity(t.parts.len());
        let mut stale_left = false;
        for (i, p) in t.parts.iter().enumerate() {
            let members: Vec<usize> = match merged.iter().find(|g| g.contains(&i)) {
                Some(g) if g.iter().max() != Some(&i) => continue,
                Some(g) => g
                    .iter()
                    .copied()
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect(),
                None if rewrite.contains(&i) => {
                    report.rewritten += 1;
                    vec![i]
                }
                None => {
                    stale_left |= !p.is_deletes() && shadowed(i) > 0;
                    out.push(p.clone()); // rule: store.fold.carry-by-reference
                    continue;
                }
            };
            let mut rows = Vec::new();
            for m in members {
                if let Part::Ref(r) = &t.parts[m] {
                    report.bytes_merged += r.bytes;
                }
                rows.extend(current_of(m, self.part_rows(&t, &t.parts[m])?));
            }
            if rows.is_empty() {
                continue;
            }
            // each merged part written as its own Parquet part (not run together with the next)
            let r = self.write_part(table, &columns, &rows, false)?;
            report.bytes_written += r.bytes;
            out.push(Part::Ref(r));
        }
        // deletion parts shadow only rows that are not current: with none left, none is
        // needed and the parts are disjoint; otherwise one before every row part shadows
        // nothing
        let overlapping = t.overlapping && stale_left;
        if !overlapping {
            out.retain(|p| !p.is_deletes());
        }
        while out.first().is_some_and(Part::is_deletes) {
            out.remove(0);
        }
        report.merges = merges.len();
        report.parts_after = out.len();
        self.lease_lost(table, &t)?;
        let mut next = t;
        next.parts = out;
        next.overlapping = overlapping;
        next.receipt = None;
        let key = self.prepare(table, &next)?;
        let (pointer, version) = self
            .renewed(table, &next)
            .ok_or_else(|| corrupt("a leased table without a pointer"))?;
        // rule: store.lease.stale-fence
        self.lease_lost(table, &next)?;
        let published = Pointer {
            format_version: layout::format_text(),
            snapshot: Some(key.clone()),
            fence: pointer.fence,
            lease: None,
            pending: None,
        };
        self.point(table, &published, &version)?;
        // published and released: nothing is left for commit to do
        self.tables.remove(table);
        report.snapshot = Some(key);
        Ok(report)
    }

    /// With [`LakeOptions::fold_after_delivery`], folds each table just published whose
    /// tiers ask for it. The delivery is published already: a fold that fails changes nothing
    /// and is left for the next one.
    pub(super) fn fold_after(&mut self, tables: Vec<String>) {
        if !self.options.fold_after_delivery {
            return;
        }
        for table in tables {
            if matches!(self.fold_wanted(&table), Ok(true)) {
                let _ = self.fold(&table);
            }
        }
    }

    /// Whether `table`'s current parts hold 4 of one size tier, so a fold would merge them.
    pub fn fold_wanted(&self, table: &str) -> Result<bool, StoreError> {
        let p = self.read_head(table)?;
        let t = self.load(table, p)?;
        let rows: Vec<u64> = t
            .parts
            .iter()
            .filter(|p| !p.is_deletes())
            .map(Part::len)
            .collect();
        Ok(!plan_merges(&rows).is_empty())
    }
}
