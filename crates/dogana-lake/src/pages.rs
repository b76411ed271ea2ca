//! A table's ledger as pages of its regions, shared by the snapshots that hold them.
//!
//! A ledger of 100,000 regions is a 24 MB document, and a delivery changes a few of its
//! regions. Kept whole in each snapshot manifest it was written again (escaped inside the
//! manifest's JSON) by every publication and read back by every transaction. Kept as pages,
//! a publication writes the pages holding a region it changed and a manifest naming every
//! page ([`LedgerPages`]), and a transaction reads the identity in the manifest: the engine
//! holds the ledger of that identity already, so no page is read at all.
//!
//! A page is an immutable object named by the SHA-256 of its bytes
//! (`tables/<t>/ledger/<id>.regions`): one line per region, `<key in hex>\t<canonical
//! JSON>\n`, in key order (the storage key of [`dogana::LedgerRows`], whose order is the
//! regions'). Canonical JSON escapes every control character, so a line holds one region.
//! Two writers making the same page write the same bytes under the same key, and a page read
//! is checked against its name.
//!
//! This module is the pages' arithmetic, without I/O: [`edit`] changes a list of pages by a
//! delivery's [`LedgerRows`], asking a caller's function for the pages it must read.

use std::sync::Arc;

use bytes::Bytes;
use dogana::LedgerRows;
use dogana_receiver::StoreError;
use sha2::{Digest, Sha256};

use crate::layout::PageRef;

/// One region: its storage key and its canonical JSON.
pub(crate) type Region = (Vec<u8>, String);

/// The regions of one page, in key order.
pub(crate) type Regions = Arc<Vec<Region>>;

/// The size a page is cut at when it grows past it; pages are kept above a quarter of it by
/// merging with a neighbour (so a ledger of n bytes has at most about 4n / this many pages).
pub const DEFAULT_PAGE_BYTES: usize = 256 << 10;

/// Lowercase hex of `bytes` (the one hex of the crate: page names, digests, keys).
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The bytes of lowercase or uppercase hex (None: not hex).
pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn corrupt(m: impl Into<String>) -> StoreError {
    StoreError::Corrupt(m.into())
}

/// The name of a page's bytes: their SHA-256 in lowercase hex.
pub(crate) fn id_of(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Bytes a region takes in its page.
fn line_bytes(r: &Region) -> usize {
    2 * r.0.len() + r.1.len() + 2
}

fn page_bytes(regions: &[Region]) -> usize {
    regions.iter().map(line_bytes).sum()
}

/// A page's bytes.
pub(crate) fn encode(regions: &[Region]) -> Bytes {
    let mut out = String::with_capacity(page_bytes(regions));
    for (key, json) in regions {
        out.push_str(&hex(key));
        out.push('\t');
        out.push_str(json);
        out.push('\n');
    }
    Bytes::from(out)
}

/// The regions of the page stored under `key` as `page`, checked against its name and its
/// reference: its bytes' SHA-256, its size, its count of regions, each line a key in hex and
/// a JSON object, keys rising from the reference's first.
pub(crate) fn decode(key: &str, page: &PageRef, bytes: &[u8]) -> Result<Vec<Region>, StoreError> {
    let bad = |what: String| corrupt(format!("the ledger page {key} {what}"));
    if bytes.len() as u64 != page.bytes || id_of(bytes) != page.id {
        return Err(bad(format!(
            "is not the page its snapshot names ({} bytes, SHA-256 {}; named: {} bytes, {})",
            bytes.len(),
            id_of(bytes),
            page.bytes,
            page.id
        )));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| bad(format!("is not UTF-8: {e}")))?;
    let mut regions: Vec<Region> = Vec::with_capacity(page.regions as usize);
    for (n, line) in text.split_terminator('\n').enumerate() {
        let (k, json) = line
            .split_once('\t')
            .ok_or_else(|| bad(format!("line {}: no tab", n + 1)))?;
        let k = unhex(k).ok_or_else(|| bad(format!("line {}: a key that is not hex", n + 1)))?;
        if !(json.starts_with('{') && json.ends_with('}')) {
            return Err(bad(format!("line {}: not a JSON object", n + 1)));
        }
        if regions.last().is_some_and(|(last, _)| *last >= k) {
            return Err(bad(format!("line {}: keys out of order", n + 1)));
        }
        regions.push((k, json.to_owned()));
    }
    if regions.len() as u64 != page.regions
        || regions.first().map(|(k, _)| hex(k)) != Some(page.first.clone())
    {
        return Err(bad(format!(
            "holds {} regions from {:?}, not {} from {:?}",
            regions.len(),
            regions.first().map(|(k, _)| hex(k)),
            page.regions,
            page.first
        )));
    }
    Ok(regions)
}

/// The canonical document of a ledger of these pages: its head, every region in order
/// joined by commas, and its tail.
pub(crate) fn document<'a>(
    head: &str,
    pages: impl IntoIterator<Item = &'a Regions>,
    tail: &str,
) -> String {
    LedgerRows::document(
        head,
        pages
            .into_iter()
            .flat_map(|p| p.iter().map(|(_, json)| json.as_str())),
        tail,
    )
}

/// A page being edited: as stored, or read and perhaps changed.
enum Slot {
    Stored(PageRef, Vec<u8>),
    Read { regions: Vec<Region>, changed: bool },
}

impl Slot {
    /// The key its first region starts at (the stored reference's, for a page not read).
    fn first(&self) -> Option<&[u8]> {
        match self {
            Slot::Stored(_, first) => Some(first),
            Slot::Read { regions, .. } => regions.first().map(|(k, _)| k.as_slice()),
        }
    }
}

/// A page written by an [`edit`]: its reference, bytes and regions.
pub(crate) struct NewPage {
    pub(crate) page: PageRef,
    pub(crate) bytes: Bytes,
    pub(crate) regions: Regions,
}

/// What an [`edit`] leaves: every page in order, and those it made.
pub(crate) struct Edited {
    pub(crate) pages: Vec<PageRef>,
    pub(crate) new: Vec<NewPage>,
}

/// The pages of `pages` (or, for `whole`, of these regions) changed by `rows`: removed
/// regions dropped, changed ones rewritten, added ones inserted in key order. Only the pages
/// holding a changed key are read (`read` is asked for them) and written again; a page that
/// grew past `max_bytes` is cut into pages of about half that, one that shrank under a quarter
/// of it is merged into a neighbour (read for it), an empty one is dropped.
pub(crate) fn edit(
    pages: &[PageRef],
    whole: Option<Vec<Region>>,
    rows: &LedgerRows,
    max_bytes: usize,
    mut read: impl FnMut(&PageRef) -> Result<Regions, StoreError>,
) -> Result<Edited, StoreError> {
    let max_bytes = max_bytes.max(1);
    let mut slots: Vec<Slot> = match whole {
        Some(regions) => vec![Slot::Read {
            regions,
            changed: true,
        }],
        None => pages
            .iter()
            .map(|p| {
                let first = unhex(&p.first)
                    .ok_or_else(|| corrupt(format!("a ledger page's first key {:?}", p.first)))?;
                Ok(Slot::Stored(p.clone(), first))
            })
            .collect::<Result<_, StoreError>>()?,
    };
    if slots.is_empty() {
        slots.push(Slot::Read {
            regions: Vec::new(),
            changed: true,
        });
    }
    let mut load = |slot: &mut Slot| -> Result<(), StoreError> {
        if let Slot::Stored(page, _) = slot {
            let regions = read(page)?.as_ref().clone();
            *slot = Slot::Read {
                regions,
                changed: false,
            };
        }
        Ok(())
    };
    // every change, by the page its key falls in (the last one starting at or before it)
    enum Change<'a> {
        Remove,
        Rewrite(&'a str),
        Add(&'a str),
    }
    let mut changes: Vec<(&[u8], Change<'_>)> = rows
        .removed
        .iter()
        .map(|k| (k.as_slice(), Change::Remove))
        .chain(
            rows.changed
                .iter()
                .map(|(k, j)| (k.as_slice(), Change::Rewrite(j))),
        )
        .chain(
            rows.added
                .iter()
                .map(|(k, j)| (k.as_slice(), Change::Add(j))),
        )
        .collect();
    changes.sort_by(|a, b| a.0.cmp(b.0));
    let firsts: Vec<Option<Vec<u8>>> = slots
        .iter()
        .map(|s| s.first().map(<[u8]>::to_vec))
        .collect();
    let slot_of = |key: &[u8]| {
        firsts
            .partition_point(|f| f.as_deref().is_none_or(|f| f <= key))
            .saturating_sub(1)
    };
    let mut i = 0;
    while i < changes.len() {
        let s = slot_of(changes[i].0);
        let end = i + changes[i..]
            .iter()
            .take_while(|c| slot_of(c.0) == s)
            .count();
        load(&mut slots[s])?;
        let Slot::Read { regions, changed } = &mut slots[s] else {
            unreachable!("loaded above")
        };
        for (key, change) in &changes[i..end] {
            let at = regions.binary_search_by(|(k, _)| k.as_slice().cmp(key));
            match (change, at) {
                (Change::Remove, Ok(j)) => {
                    regions.remove(j);
                }
                (Change::Rewrite(json), Ok(j)) => regions[j].1 = (*json).to_owned(),
                (Change::Add(json), Err(j)) => {
                    regions.insert(j, (key.to_vec(), (*json).to_owned()))
                }
                (Change::Add(_), Ok(_)) => {
                    return Err(corrupt(format!(
                        "a region added at key {} is stored already",
                        hex(key)
                    )))
                }
                (Change::Remove | Change::Rewrite(_), Err(_)) => {
                    return Err(corrupt(format!(
                        "a region changed at key {} is not stored",
                        hex(key)
                    )))
                }
            }
        }
        *changed = true;
        i = end;
    }
    // cut the pages that grew, merge the ones that shrank, drop the empty ones
    let changed_bytes = |slot: &Slot| match slot {
        Slot::Read {
            regions,
            changed: true,
        } => Some(page_bytes(regions)),
        _ => None,
    };
    let mut s = 0;
    while s < slots.len() {
        let Some(bytes) = changed_bytes(&slots[s]) else {
            s += 1;
            continue;
        };
        if bytes == 0 && slots.len() > 1 {
            slots.remove(s);
            continue;
        }
        if bytes > max_bytes {
            let Slot::Read { regions, .. } = slots.remove(s) else {
                unreachable!("a changed page is read")
            };
            let cut = cut(regions, max_bytes / 2);
            let n = cut.len();
            for (j, regions) in cut.into_iter().enumerate() {
                slots.insert(
                    s + j,
                    Slot::Read {
                        regions,
                        changed: true,
                    },
                );
            }
            s += n;
            continue;
        }
        if bytes < max_bytes / 4 && slots.len() > 1 {
            // into the next page, or the last one into the one before it
            let (a, b) = if s + 1 < slots.len() {
                (s, s + 1)
            } else {
                (s - 1, s)
            };
            load(&mut slots[a])?;
            load(&mut slots[b])?;
            let (Slot::Read { regions: ra, .. }, Slot::Read { regions: rb, .. }) =
                (&slots[a], &slots[b])
            else {
                unreachable!("loaded above")
            };
            if page_bytes(ra) + page_bytes(rb) <= max_bytes {
                let Slot::Read { regions: rb, .. } = slots.remove(b) else {
                    unreachable!("loaded above")
                };
                if let Slot::Read { regions, changed } = &mut slots[a] {
                    regions.extend(rb);
                    *changed = true;
                }
                s = a;
                continue;
            }
        }
        s += 1;
    }
    let mut out = Edited {
        pages: Vec::with_capacity(slots.len()),
        new: Vec::new(),
    };
    for slot in slots {
        match slot {
            Slot::Stored(page, _) => out.pages.push(page),
            Slot::Read { regions, changed } => {
                if regions.is_empty() {
                    continue; // the ledger has no region left (never after a delivery)
                }
                let bytes = encode(&regions);
                let page = PageRef {
                    id: id_of(&bytes),
                    first: hex(&regions[0].0),
                    regions: regions.len() as u64,
                    bytes: bytes.len() as u64,
                };
                out.pages.push(page.clone());
                if changed {
                    out.new.push(NewPage {
                        page,
                        bytes,
                        regions: Arc::new(regions),
                    });
                }
            }
        }
    }
    Ok(out)
}

/// `regions` cut into pages of about `target` bytes each (the last may be smaller; none
/// empty).
fn cut(regions: Vec<Region>, target: usize) -> Vec<Vec<Region>> {
    let mut out: Vec<Vec<Region>> = Vec::new();
    let mut page: Vec<Region> = Vec::new();
    let mut bytes = 0;
    for r in regions {
        bytes += line_bytes(&r);
        page.push(r);
        if bytes >= target {
            out.push(std::mem::take(&mut page));
            bytes = 0;
        }
    }
    match out.last_mut() {
        // a short remainder joins the page before it (which stays under 1.5 target)
        Some(last) if bytes < target / 2 => last.extend(page),
        _ if !page.is_empty() => out.push(page),
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use proptest::prelude::*;

    use super::*;

    const MAX: usize = 600;

    fn region(key: u16, size: u8) -> Region {
        (
            key.to_be_bytes().to_vec(),
            format!("{{\"r\":\"{}\"}}", "x".repeat(usize::from(size))),
        )
    }

    /// The pages `edit` makes of `regions` from nothing (every region added), and their bytes.
    fn start(regions: &BTreeMap<Vec<u8>, String>) -> (Vec<PageRef>, HashMap<String, Regions>) {
        let rows = rows_of(&BTreeMap::new(), regions);
        let edited = edit(&[], None, &rows, MAX, |_| unreachable!("nothing stored")).unwrap();
        let store = edited
            .new
            .into_iter()
            .map(|n| (n.page.id, n.regions))
            .collect();
        (edited.pages, store)
    }

    /// The rows that take `before` to `after`.
    fn rows_of(
        before: &BTreeMap<Vec<u8>, String>,
        after: &BTreeMap<Vec<u8>, String>,
    ) -> LedgerRows {
        LedgerRows {
            head: "{\"regions\":[".into(),
            tail: "]}".into(),
            publication_id: None,
            changed: after
                .iter()
                .filter(|(k, v)| before.get(*k).is_some_and(|b| b != *v))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            added: after
                .iter()
                .filter(|(k, _)| !before.contains_key(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            removed: before
                .keys()
                .filter(|k| !after.contains_key(*k))
                .cloned()
                .collect(),
        }
    }

    fn arb_ledger() -> impl Strategy<Value = BTreeMap<Vec<u8>, String>> {
        prop::collection::btree_map(0u16..400, 0u8..80, 1..120).prop_map(|m| {
            m.into_iter()
                .map(|(k, s)| region(k, s))
                .collect::<BTreeMap<_, _>>()
        })
    }

    proptest! {
        // rule: RECV-09 — the ledger stored after a delivery is the ledger it leaves, and only
        // the pages holding a changed region are written again
        #[test]
        fn edited_pages_hold_the_ledger_after_any_change(
            before in arb_ledger(),
            after in arb_ledger(),
        ) {
            let (pages, mut store) = start(&before);
            let rows = rows_of(&before, &after);
            let mut read = Vec::new();
            let edited = edit(&pages, None, &rows, MAX, |p| {
                read.push(p.id.clone());
                Ok(store[&p.id].clone())
            })
            .unwrap();
            for n in &edited.new {
                prop_assert_eq!(id_of(&n.bytes), n.page.id.clone());
                prop_assert_eq!(decode("k", &n.page, &n.bytes).unwrap(), n.regions.as_ref().clone());
                store.insert(n.page.id.clone(), n.regions.clone());
            }
            // the pages, in order, are the ledger after
            let got: Vec<Region> = edited
                .pages
                .iter()
                .flat_map(|p| store[&p.id].as_ref().clone())
                .collect();
            let want: Vec<Region> = after.into_iter().collect();
            prop_assert_eq!(got, want);
            // every page within its bounds: none empty, none past the cut (regions here are
            // far smaller than a page)
            for p in &edited.pages {
                prop_assert!(p.regions > 0);
                prop_assert!(p.bytes as usize <= MAX, "{} bytes", p.bytes);
            }
            // a page written again is one the change touched or a neighbour it merged with
            let unchanged = rows.changed.is_empty() && rows.added.is_empty() && rows.removed.is_empty();
            if unchanged {
                prop_assert!(edited.new.is_empty());
                prop_assert!(read.is_empty());
            }
        }

        // rule: RECV-09 — a change of one region reads and writes about one page, whatever
        // the ledger's size
        #[test]
        fn one_region_changed_writes_few_pages(before in arb_ledger(), pick in any::<prop::sample::Index>()) {
            let (pages, store) = start(&before);
            let key = pick.get(&before.keys().cloned().collect::<Vec<_>>()).clone();
            let mut after = before.clone();
            after.insert(key, "{\"r\":\"changed\"}".into());
            let rows = rows_of(&before, &after);
            let mut reads = 0;
            let edited = edit(&pages, None, &rows, MAX, |p| {
                reads += 1;
                Ok(store[&p.id].clone())
            })
            .unwrap();
            prop_assert!(reads <= 3, "{reads} pages read of {}", pages.len());
            prop_assert!(edited.new.len() <= 2, "{} pages written of {}", edited.new.len(), pages.len());
        }
    }

    // rule: RECOVERY-01 — a page that is not the one named is refused, naming it
    #[test]
    fn a_page_not_matching_its_name_is_refused() {
        let regions = vec![region(1, 3), region(2, 4)];
        let bytes = encode(&regions);
        let page = PageRef {
            id: id_of(&bytes),
            first: hex(&regions[0].0),
            regions: 2,
            bytes: bytes.len() as u64,
        };
        assert_eq!(decode("k", &page, &bytes).unwrap(), regions);
        let mut other = bytes.to_vec();
        other[6] = b'y';
        let e = decode("tables/t/ledger/x.regions", &page, &other).unwrap_err();
        assert!(
            matches!(&e, StoreError::Corrupt(m) if m.contains("tables/t/ledger/x.regions") && m.contains(&page.id)),
            "{e}"
        );
    }
}
