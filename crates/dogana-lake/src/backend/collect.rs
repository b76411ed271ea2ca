//! Collections (`bucket-collect`): reclaiming the parts only older snapshots name, record
//! and markers first. Moved out of `backend.rs`, whose private state it shares.

use super::*;

impl Lake {
    /// Collects `table` under its lease (`bucket-collect`): keeps the newest
    /// `retain_generations` snapshots of its chain whole (the current one included,
    /// `store.collect.retain-generations`) and every part one of them names
    /// (`store.fold.reference-retention`); deletes every other part of the table (those only
    /// older snapshots name, and those no snapshot names, left by a writer that died). Every
    /// snapshot manifest is kept (`store.collect.manifest-kept`), each reclaimed one with a
    /// `.collected.json` marker beside it; the record of what it deletes and the markers are
    /// written before anything is deleted (`store.collect.drop-first`). Receipts and the
    /// ledgers in the manifests are never collected. A `retain_generations` of 0 is
    /// [`LakeError::ConfigInvalid`] and nothing is touched.
    pub fn collect(
        &mut self,
        table: &str,
        retain_generations: u32,
    ) -> Result<CollectReport, StoreError> {
        if retain_generations == 0 {
            return Err(layout::parse_retain_generations("0")
                .expect_err("0 is refused")
                .into());
        }
        if self.read_pointer(table)?.is_none() {
            // no such table: nothing to collect, and no lease (a pointer) is created for it
            return Ok(CollectReport {
                table: table.to_owned(),
                retained: 0,
                reclaimed: 0,
                deleted: 0,
                bytes: 0,
                segments: 0,
                record: None,
            });
        }
        self.begin(Txn::Write, &[table])?;
        let r = self.collect_leased(table, retain_generations);
        self.rollback(); // nothing to publish: the lease released, the fence kept
        r
    }

    fn collect_leased(&mut self, table: &str, retain: u32) -> Result<CollectReport, StoreError> {
        let t = self
            .tables
            .get(table)
            .cloned()
            .ok_or_else(|| corrupt("no table"))?;
        let fence = t.fence.unwrap_or(0);
        let mut report = CollectReport {
            table: table.to_owned(),
            retained: 0,
            reclaimed: 0,
            deleted: 0,
            bytes: 0,
            segments: 0,
            record: None,
        };
        // the chain, newest first
        let dir = table_dir(table);
        let listed = self.root.list(&format!("tables/{dir}/snapshots/"))?;
        // store.collect.index-walk: below the retained snapshots, the first one an earlier
        // collection reclaimed (its marker is listed) ends the walk: it and every older one
        // were reclaimed then, and come from the listing
        let marked: HashSet<&str> = listed
            .iter()
            .filter_map(|k| k.strip_suffix(".collected.json"))
            .collect();
        let mut chain: Vec<(String, SnapshotManifest)> = Vec::new();
        let mut at = t.head_key.clone();
        while let Some(key) = at {
            if chain.len() >= retain as usize
                && marked.contains(key.strip_suffix(".json").unwrap_or(&key))
            {
                break;
            }
            let s = self.snapshot(&key)?;
            at = s.parent.clone();
            chain.push((key, s));
        }
        let keep = (retain as usize).min(chain.len());
        let (retained, older) = chain.split_at(keep);
        let kept: HashSet<&str> = retained
            .iter()
            .flat_map(|(_, s)| s.parts.iter().map(|p| p.path.as_str()))
            .collect();
        let mut sizes: HashMap<String, u64> = HashMap::new();
        for (_, s) in &chain {
            for p in &s.parts {
                sizes.insert(p.path.clone(), p.bytes);
            }
        }
        let doomed: Vec<String> = self
            .root
            .list(&format!("tables/{dir}/parts/"))?
            .into_iter()
            .filter(|k| !kept.contains(k.as_str()))
            .collect();
        // folded-runs segments no retained snapshot's index names (merged away, or a dead
        // writer's): an older snapshot's index then reads as invalid, and a reader of it walks
        let kept_segments: HashSet<String> = retained
            .iter()
            .flat_map(|(_, s)| crate::runs::segment_keys(s))
            .collect();
        let doomed_segments: Vec<String> = self
            .root
            .list(&format!("tables/{dir}/runs/"))?
            .into_iter()
            .filter(|k| !kept_segments.contains(k))
            .collect();
        report.retained = retained.len();
        if doomed.is_empty() && doomed_segments.is_empty() {
            return Ok(report);
        }
        let doomed_set: HashSet<&str> = doomed.iter().map(String::as_str).collect();
        // every snapshot (of the chain, or left by a writer that died) naming a doomed part
        let mut reclaimed: Vec<(String, Vec<String>)> = Vec::new();
        let in_chain: HashSet<&str> = chain.iter().map(|(k, _)| k.as_str()).collect();
        let mut others = Vec::new();
        for key in &listed {
            let reclaimed_before = marked.contains(key.strip_suffix(".json").unwrap_or(key));
            if layout::is_snapshot_manifest(key)
                && !in_chain.contains(key.as_str())
                && !reclaimed_before
            {
                others.push((key.clone(), self.snapshot(key)?));
            }
        }
        for (key, s) in older.iter().chain(others.iter()) {
            let gone: Vec<String> = s
                .parts
                .iter()
                .filter(|p| doomed_set.contains(p.path.as_str()))
                .map(|p| p.path.clone())
                .collect();
            if !gone.is_empty() {
                reclaimed.push((key.clone(), gone));
            }
        }
        let record_key = format!(
            "tables/{dir}/_collected/{fence:020}-{}.json",
            uuid::Uuid::new_v4().simple()
        );
        let record = layout::CollectionRecord {
            format_version: layout::format_text(),
            table: table.to_owned(),
            fence,
            created_at: Utc::now().to_rfc3339(),
            retain_generations: retain,
            retained: retained.iter().map(|(k, _)| k.clone()).collect(),
            reclaimed: reclaimed.iter().map(|(k, _)| k.clone()).collect(),
            deleted: doomed.iter().chain(&doomed_segments).cloned().collect(),
        };
        // rule: store.collect.drop-first — recorded before anything is deleted
        let record_bytes = json(&record)?;
        self.root.put(&record_key, record_bytes.clone())?;
        let mut written = vec![(record_key.clone(), record_bytes)];
        for (key, parts) in &reclaimed {
            // rule: store.collect.manifest-kept — the manifest stays, a marker beside it
            let marker = layout::CollectedMarker {
                format_version: layout::format_text(),
                snapshot: key.clone(),
                parts: parts.clone(),
                collection: record_key.clone(),
            };
            let bytes = json(&marker)?;
            self.root
                .put(&layout::collected_marker(key), bytes.clone())?;
            written.push((layout::collected_marker(key), bytes));
        }
        // the lease still ours (a later writer would have fenced us): only then delete
        // (the renewal keeps running through the deletions: it changes only the lease's
        // renewal count, so holder and fence say whether the lease is ours)
        let (pointer, _) = t
            .pointer
            .as_ref()
            .ok_or_else(|| corrupt("a leased table without a pointer"))?;
        self.lease_lost(table, &t)?;
        let holder = |p: &Pointer| p.lease.as_ref().map(|l| l.holder.clone());
        let now = self.read_pointer(table)?;
        if now.as_ref().map(|(p, _)| (p.fence, holder(p))) != Some((pointer.fence, holder(pointer)))
        {
            return Err(LakeError::LeaseFenced {
                table: table.to_owned(),
                fence: pointer.fence,
                current: now.map(|(p, _)| p.fence).unwrap_or(0),
            }
            .into());
        }
        // in a bucket that pushes index, its manifest records every key first
        // (store.collect.drop-first, store.collect.folded-runs)
        crate::sync::record_collected(&self.root, &record.deleted, &written)?;
        for key in &doomed {
            self.root.delete(key)?;
            report.deleted += 1;
            report.bytes += sizes.get(key).copied().unwrap_or(0);
        }
        for key in &doomed_segments {
            self.root.delete(key)?;
            report.segments += 1;
        }
        report.reclaimed = reclaimed.len();
        report.record = Some(record_key);
        Ok(report)
    }
}
