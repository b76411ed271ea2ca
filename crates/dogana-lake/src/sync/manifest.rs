//! The bucket manifest (`<prefix>/manifest.json`): every synced key's SHA-256, size and owner,
//! the tombstones of deletions pushes propagated, the collected records, and the key-set
//! ledger of the nodes' verifying keys (`store.push.manifest-commit`,
//! `store.push.manifest-format`, `bucket-index-commits`).
//!
//! A push replaces it under If-Match on the ETag it read (on `file://` buckets, the
//! filesystem root's versioned pointer files give the same compare-and-set), after which it
//! writes the same bytes as the generation manifest `manifests/<generation>.json`, keeping
//! `retain_generations` of them.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use ring::signature::{self, Ed25519KeyPair, KeyPair as _};
use serde::{Deserialize, Serialize};

use crate::pages::{hex, unhex};
use crate::LakeError;

/// The bucket manifest's key under the bucket's prefix.
pub const MANIFEST: &str = "manifest.json";
/// Where generation manifests live under the bucket's prefix.
pub const GENERATIONS: &str = "manifests/";

/// The newest manifest format this build reads: 1 without collected records, 2 with them.
pub const FORMAT_MAX: u32 = 2;

/// One synced object as the bucket manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
    /// The node whose push first listed it; None: unowned (content-addressed keys two nodes
    /// may both write), which propagates no deletion (`store.merge.ownership`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

/// A deletion a push propagated: the entry it names is gone from the bucket
/// (`store.merge.tombstone-signed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tombstone {
    /// The key deleted.
    pub key: String,
    /// The owner of the entry it deleted (the node that signs it).
    pub owner: String,
    /// When the push deleted it (RFC 3339, the pusher's clock).
    pub deleted_at: String,
    /// The ed25519 signature over [`Tombstone::message`], hex; None: unsigned (a node without
    /// an issuer key), which nobody else verifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl Tombstone {
    /// The bytes a tombstone's signature covers: its key, owner and deletion instant.
    pub fn message(&self) -> Vec<u8> {
        format!(
            "dogana-tombstone-1\n{}\n{}\n{}",
            self.key, self.owner, self.deleted_at
        )
        .into_bytes()
    }

    /// A tombstone signed with `key` (None: unsigned).
    pub fn signed(
        key: &str,
        owner: &str,
        deleted_at: &str,
        issuer: Option<&Ed25519KeyPair>,
    ) -> Tombstone {
        let mut t = Tombstone {
            key: key.to_owned(),
            owner: owner.to_owned(),
            deleted_at: deleted_at.to_owned(),
            signature: None,
        };
        t.signature = issuer.map(|k| hex(k.sign(&t.message()).as_ref()));
        t
    }
}

/// A key of the key-set ledger: a node's verifying key and when it is valid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeKey {
    /// The node.
    pub node: String,
    /// Its ed25519 public key, hex.
    pub public_key: String,
    /// From when (RFC 3339).
    pub valid_from: String,
    /// Until when, exclusive (None: still valid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<String>,
}

/// A key a collection recorded as collected (`store.merge.collected`): no push uploads it or
/// lists it again while the record stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Collected {
    /// The key.
    pub key: String,
    /// When it was recorded (RFC 3339).
    pub at: String,
}

/// The bucket manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BucketManifest {
    /// 1 while it holds no collected record, 2 while it holds one; absent reads as 1.
    #[serde(default = "one")]
    pub format: u32,
    /// The store it indexes.
    pub store_id: String,
    /// Its generation: 1 for the first commit, one more for each.
    pub generation: u64,
    /// Who committed it and when.
    pub committed_by: String,
    /// When (RFC 3339, the committer's clock).
    pub committed_at: String,
    /// Every listed key.
    pub entries: BTreeMap<String, Entry>,
    /// Deletions propagated, kept until `tombstone_ttl` after their instant.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tombstones: Vec<Tombstone>,
    /// Keys collected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collected: Vec<Collected>,
    /// The key-set ledger.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<NodeKey>,
}

fn one() -> u32 {
    1
}

fn cut(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// Why a tombstone is not trusted (`store.merge.tombstone-unverified`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unverified {
    /// It carries no signature.
    Unsigned,
    /// No key of its owner in the key-set ledger is valid at its instant.
    UnknownKey,
    /// The signature does not verify under any such key.
    BadSignature,
    /// Its instant does not parse.
    BadInstant,
}

impl std::fmt::Display for Unverified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unverified::Unsigned => "it is unsigned",
            Unverified::UnknownKey => {
                "no key of its owner in the key-set ledger is valid at its deleted_at"
            }
            Unverified::BadSignature => "its signature does not verify",
            Unverified::BadInstant => "its deleted_at is not an RFC 3339 instant",
        })
    }
}

fn instant(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

impl BucketManifest {
    /// An empty manifest of `store_id`, generation 0 (never committed).
    pub fn empty(store_id: &str) -> BucketManifest {
        BucketManifest {
            format: 1,
            store_id: store_id.to_owned(),
            generation: 0,
            committed_by: String::new(),
            committed_at: String::new(),
            entries: BTreeMap::new(),
            tombstones: Vec::new(),
            collected: Vec::new(),
            keys: Vec::new(),
        }
    }

    /// Parses a manifest read at `key`, refusing one that does not parse, is newer than
    /// [`FORMAT_MAX`], or lists a digest that is not 64 hex digits.
    pub fn parse(key: &str, bytes: &[u8]) -> Result<BucketManifest, LakeError> {
        let bad = |reason: String| LakeError::SyncManifestInvalid {
            key: key.to_owned(),
            reason: cut(&reason, 200),
        };
        let m: BucketManifest =
            serde_json::from_slice(bytes).map_err(|e| bad(format!("does not parse: {e}")))?;
        if m.format > FORMAT_MAX || m.format == 0 {
            return Err(bad(format!(
                "format {} (this build reads 1 and 2; store.push.manifest-format)",
                m.format
            )));
        }
        for (k, e) in &m.entries {
            if e.sha256.len() != 64 || !e.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad(format!(
                    "the entry {} lists sha256 {:?}, not 64 hex digits",
                    cut(k, 120),
                    cut(&e.sha256, 80)
                )));
            }
        }
        Ok(m)
    }

    /// Its canonical bytes, with `format` as its collected records say.
    pub fn to_bytes(&mut self) -> Vec<u8> {
        self.format = if self.collected.is_empty() { 1 } else { 2 };
        let mut b = serde_json::to_vec_pretty(self).expect("a manifest serializes");
        b.push(b'\n');
        b
    }

    /// Checks a tombstone against the key-set ledger: Ok when its owner's key valid at its
    /// instant signed it.
    pub fn verify(&self, t: &Tombstone) -> Result<(), Unverified> {
        let Some(sig) = &t.signature else {
            return Err(Unverified::Unsigned);
        };
        let at = instant(&t.deleted_at).ok_or(Unverified::BadInstant)?;
        let valid: Vec<&NodeKey> = self
            .keys
            .iter()
            .filter(|k| k.node == t.owner)
            .filter(|k| instant(&k.valid_from).is_some_and(|from| from <= at))
            .filter(|k| {
                k.valid_until
                    .as_deref()
                    .is_none_or(|u| instant(u).is_some_and(|until| at < until))
            })
            .collect();
        if valid.is_empty() {
            return Err(Unverified::UnknownKey);
        }
        let sig = unhex(sig).ok_or(Unverified::BadSignature)?;
        let message = t.message();
        for k in valid {
            if let Some(pk) = unhex(&k.public_key) {
                if signature::UnparsedPublicKey::new(&signature::ED25519, pk)
                    .verify(&message, &sig)
                    .is_ok()
                {
                    return Ok(());
                }
            }
        }
        Err(Unverified::BadSignature)
    }

    /// Registers `issuer` as `node`'s key from `now` (`tombstone-signed-node`): a key already
    /// listed changes nothing; another key of the node ends where this one starts.
    pub fn register_key(&mut self, node: &str, issuer: &Ed25519KeyPair, now: &str) {
        let public = hex(issuer.public_key().as_ref());
        if self
            .keys
            .iter()
            .any(|k| k.node == node && k.public_key == public && k.valid_until.is_none())
        {
            return;
        }
        for k in self.keys.iter_mut() {
            if k.node == node && k.valid_until.is_none() {
                k.valid_until = Some(now.to_owned());
            }
        }
        self.keys.push(NodeKey {
            node: node.to_owned(),
            public_key: public,
            valid_from: now.to_owned(),
            valid_until: None,
        });
    }
}

/// The key of generation manifest `n`.
pub fn generation_key(n: u64) -> String {
    format!("{GENERATIONS}{n:020}.json")
}
