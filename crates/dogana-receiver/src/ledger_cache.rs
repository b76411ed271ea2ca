//! The ledgers the engine read or wrote last, by their document.
//!
//! A delivery reads its table's stored ledger document at least twice (to decide, and again
//! under the write lock to see whether the head moved), and a new value parsed from text has
//! none of the per-region canonical bytes that make its identity cost little more than one
//! SHA-256 of the document (bench/apply.md, `identity_cold`: 4x to 6x). So the engine keeps the
//! last few ledgers with the exact text they were read from or saved as, and answers a read
//! whose text is byte for byte one of them with that value instead of parsing it again.
//!
//! Keyed by the whole document, not by store or table: the same text always parses to the same
//! ledger, so an entry can never answer for a document it does not equal, whoever wrote it and
//! whichever handle reads it. The cost of a hit is a comparison of the text, far below parsing
//! it.
//!
//! A backend that keeps its ledgers region by region stores each one's identity beside it;
//! for those the engine reads the identity (64 characters) instead of the document, and a
//! kept ledger of that identity answers without reading a region.

use std::sync::{Arc, Mutex, OnceLock};

use dogana::{FromWire, Ledger};

use crate::StoreError;

/// How many ledgers are kept (a group of tables decided together reads one per table).
const ENTRIES: usize = 8;
/// Documents larger than this are not kept: their parse is paid each time, their text not
/// held twice.
const MAX_BYTES: usize = 64 << 20;

/// What an entry is known by: the exact text it was read from or saved as, or the identity
/// a backend keeps beside a ledger it stores region by region (the identity is the SHA-256 of
/// the ledger's whole identity form, so it names one ledger as surely as its text does).
enum Key {
    /// The caller's own string, moved in: keeping it costs no second copy.
    Text(Arc<String>),
    Identity(Arc<str>),
}

type Entry = (Key, Ledger);

fn entries() -> &'static Mutex<Vec<Entry>> {
    static CACHE: OnceLock<Mutex<Vec<Entry>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Vec::with_capacity(ENTRIES)))
}

/// The kept ledger whose key `matches`, made the most recently used.
fn find(matches: impl Fn(&Key) -> bool) -> Option<Ledger> {
    let mut kept = entries().lock().ok()?;
    let k = kept.iter().position(|(key, _)| matches(key))?;
    let entry = kept.remove(k);
    let ledger = entry.1.clone();
    kept.push(entry);
    Some(ledger)
}

fn keep(key: Key, ledger: &Ledger) {
    if let Ok(mut kept) = entries().lock() {
        kept.retain(|(k, _)| match (k, &key) {
            (Key::Text(a), Key::Text(b)) => a != b,
            (Key::Identity(a), Key::Identity(b)) => a != b,
            _ => true,
        });
        if kept.len() >= ENTRIES {
            kept.remove(0);
        }
        kept.push((key, ledger.clone()));
    }
}

/// The ledger of this stored document: the kept value when one was read from or saved as
/// exactly this text, else the document parsed (and kept).
pub(crate) fn parse(document: String) -> Result<Ledger, StoreError> {
    if let Some(ledger) = find(|k| matches!(k, Key::Text(t) if **t == document)) {
        return Ok(ledger);
    }
    let ledger = Ledger::from_json(&document)?;
    remember(document, &ledger);
    Ok(ledger)
}

/// Keeps `ledger` as the value of `document` (which must be its JSON text).
pub(crate) fn remember(document: String, ledger: &Ledger) {
    if document.len() > MAX_BYTES {
        return;
    }
    keep(Key::Text(Arc::new(document)), ledger);
}

/// The kept ledger of this identity, if any.
pub(crate) fn by_identity(identity: &str) -> Option<Ledger> {
    find(|k| matches!(k, Key::Identity(i) if &**i == identity))
}

/// Keeps `ledger` as the ledger of `identity` (which must be its identity).
pub(crate) fn remember_identity(identity: &str, ledger: &Ledger) {
    keep(Key::Identity(identity.into()), ledger);
}

#[cfg(test)]
mod tests {
    use super::*;
    use dogana::{Contract, LogicalType, Shape, Wire};

    fn ledger(at: &str) -> Ledger {
        let c = Contract::builder("cache_t", ["id"])
            .shape("full", Shape::full())
            .column("id", LogicalType::Int)
            .build()
            .unwrap();
        let m = c
            .manifest("full", at.parse().unwrap())
            .rows(1)
            .build()
            .unwrap();
        Ledger::new(c).apply(&m).unwrap()
    }

    #[test]
    fn a_kept_document_answers_with_its_own_ledger_only() {
        // rule: RECV-09
        let a = ledger("2026-10-01T00:00:00Z");
        let b = ledger("2026-10-02T00:00:00Z");
        let (ta, tb) = (a.to_json(), b.to_json());
        remember(ta.clone(), &a);
        remember(tb.clone(), &b);
        assert_eq!(parse(ta.clone()).unwrap().identity(), a.identity());
        assert_eq!(parse(tb).unwrap().identity(), b.identity());
        // a text the cache does not hold is parsed, and an unparsable one refused
        let c = ledger("2026-10-03T00:00:00Z");
        assert_eq!(parse(c.to_json()).unwrap(), c);
        assert!(parse(ta[..ta.len() - 1].to_owned()).is_err());
    }
}
