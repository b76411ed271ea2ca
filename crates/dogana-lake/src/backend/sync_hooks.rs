//! What `crate::sync` asks of a lake it pushes into: a table's lease, and publishing a pushed
//! snapshot under it.

use super::*;

impl Lake {
    /// Takes `table`'s write lease for a push (`crate::sync`), renewed while the push uploads:
    /// the head the lease read and how many receipts it publishes. Release it with
    /// [`Lake::sync_publish`] or [`Lake::sync_release`].
    pub(crate) fn sync_lease(&mut self, table: &str) -> Result<(Option<String>, u64), StoreError> {
        Backend::begin(self, Txn::Write, &[table])?;
        let t = self.table(table)?;
        Ok((t.head_key.clone(), t.receipts))
    }

    /// Publishes `snapshot` (a snapshot pushed into this store) as `table`'s head under the
    /// lease [`Lake::sync_lease`] took, at a fence at least `fence` (the pushing store's, so
    /// fences grow along the chain), releasing the lease in the same write.
    pub(crate) fn sync_publish(
        &mut self,
        table: &str,
        snapshot: &str,
        fence: u64,
    ) -> Result<(), StoreError> {
        let t = self
            .tables
            .remove(table)
            .ok_or_else(|| corrupt(format!("{table} is not leased")))?;
        let r = (|| {
            self.lease_lost(table, &t)?;
            let (pointer, version) = self
                .renewed(table, &t)
                .ok_or_else(|| corrupt("a leased table without a pointer"))?;
            self.lease_lost(table, &t)?;
            let next = Pointer {
                format_version: layout::format_text(),
                snapshot: Some(snapshot.to_owned()),
                fence: pointer.fence.max(fence),
                lease: None,
                pending: None,
            };
            self.point(table, &next, &version).map(|_| ())
        })();
        if r.is_err() {
            let _ = self.release(table, &t);
        }
        self.txn = None;
        self.renewal = None;
        r
    }

    /// Releases every lease [`Lake::sync_lease`] took, publishing nothing.
    pub(crate) fn sync_release(&mut self) {
        Backend::rollback(self);
    }
}
