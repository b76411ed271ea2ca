//! Who may do what: the tokens file.
//!
//! ```toml
//! [[sender]]
//! name = "acme-exports"
//! token_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
//! deliver = ["orders"]
//! read = ["orders", "customers"]
//! ```
//!
//! The file holds the SHA-256 of each bearer token, never the token: a copy of the file lets
//! nobody in. A request's token is hashed and compared with every sender's digest in constant
//! time (no early exit, so the time taken says nothing about which digest came close).

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::cut;

/// One sender: its name (recorded as each receipt's `source`) and its grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    /// The name receipts record.
    pub name: String,
    digest: [u8; 32],
    deliver: BTreeSet<String>,
    read: BTreeSet<String>,
}

impl Sender {
    /// Whether the sender may deliver to `table`.
    pub fn may_deliver(&self, table: &str) -> bool {
        self.deliver.contains(table)
    }

    /// Whether the sender may read `table`'s claims, receipts and plans (delivering grants it
    /// too: a sender asks what to send next).
    pub fn may_read(&self, table: &str) -> bool {
        self.read.contains(table) || self.deliver.contains(table)
    }
}

/// Every sender of a tokens file.
#[derive(Debug, Clone, Default)]
pub struct Senders {
    senders: Vec<Sender>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    sender: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    token_sha256: String,
    #[serde(default)]
    deliver: Vec<String>,
    #[serde(default)]
    read: Vec<String>,
}

impl Senders {
    /// Reads a tokens file; a refusal names the file, the sender and the rule broken.
    pub fn load(path: &Path) -> Result<Senders, String> {
        let shown = path.display();
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the tokens file {shown}: {e}"))?;
        Senders::parse(&text).map_err(|e| format!("the tokens file {shown}: {e}"))
    }

    /// Parses a tokens file's text.
    pub fn parse(text: &str) -> Result<Senders, String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_owned())?;
        let mut senders = Vec::with_capacity(file.sender.len());
        for (i, e) in file.sender.into_iter().enumerate() {
            let at = format!("sender {} ({})", i + 1, cut(&e.name));
            if e.name.trim().is_empty() || e.name.chars().any(char::is_control) {
                return Err(format!(
                    "{at}: name must be a non-empty text without control characters"
                ));
            }
            if senders.iter().any(|s: &Sender| s.name == e.name) {
                return Err(format!(
                    "{at}: the name is given twice; each sender has one entry"
                ));
            }
            let digest = hex32(&e.token_sha256).ok_or_else(|| {
                format!(
                    "{at}: token_sha256 {:?} is not 64 hexadecimal digits; write the SHA-256 of the \
                     token (printf %s TOKEN | sha256sum), never the token itself",
                    cut(&e.token_sha256)
                )
            })?;
            if senders.iter().any(|s: &Sender| s.digest == digest) {
                return Err(format!(
                    "{at}: another sender has the same token; give each its own"
                ));
            }
            senders.push(Sender {
                name: e.name,
                digest,
                deliver: e.deliver.into_iter().collect(),
                read: e.read.into_iter().collect(),
            });
        }
        Ok(Senders { senders })
    }

    /// The sender holding `token`, compared with every digest in constant time.
    pub fn authenticate(&self, token: &str) -> Option<&Sender> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = None;
        for s in &self.senders {
            if bool::from(s.digest.ct_eq(&digest)) {
                found = Some(s);
            }
        }
        found
    }

    /// How many senders there are.
    pub fn len(&self) -> usize {
        self.senders.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.senders.is_empty()
    }
}

fn hex32(text: &str) -> Option<[u8; 32]> {
    let b = text.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (i, pair) in b.chunks(2).enumerate() {
        out[i] = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(token: &str) -> String {
        Sha256::digest(token.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn file(entries: &[(&str, &str, &[&str], &[&str])]) -> String {
        let mut text = String::new();
        for (name, token, deliver, read) in entries {
            text.push_str(&format!(
                "[[sender]]\nname = {name:?}\ntoken_sha256 = {:?}\ndeliver = {deliver:?}\nread = {read:?}\n",
                digest(token)
            ));
        }
        text
    }

    // rule: serve.auth.token
    #[test]
    fn a_token_names_its_sender_and_no_other() {
        let s = Senders::parse(&file(&[
            ("acme", "t-acme", &["orders"], &[]),
            ("beta", "t-beta", &["customers"], &["orders"]),
        ]))
        .unwrap();
        assert_eq!(
            s.authenticate("t-acme").map(|s| s.name.as_str()),
            Some("acme")
        );
        assert_eq!(
            s.authenticate("t-beta").map(|s| s.name.as_str()),
            Some("beta")
        );
        assert!(s.authenticate("t-acm").is_none());
        assert!(s.authenticate("").is_none());
    }

    // rule: serve.auth.grant
    #[test]
    fn grants_are_per_table_and_delivering_lets_read() {
        let s = Senders::parse(&file(&[("beta", "t", &["customers"], &["orders"])])).unwrap();
        let beta = s.authenticate("t").unwrap();
        assert!(beta.may_deliver("customers"));
        assert!(!beta.may_deliver("orders"));
        assert!(beta.may_read("orders"));
        assert!(beta.may_read("customers"));
        assert!(!beta.may_read("Orders"));
    }

    #[test]
    fn a_token_written_in_clear_is_refused_naming_the_sender() {
        let e =
            Senders::parse("[[sender]]\nname = \"acme\"\ntoken_sha256 = \"secret\"\n").unwrap_err();
        assert!(
            e.contains("sender 1 (acme)") && e.contains("64 hexadecimal"),
            "{e}"
        );
    }

    #[test]
    fn two_senders_with_one_token_are_refused() {
        let e = Senders::parse(&file(&[("a", "t", &[], &[]), ("b", "t", &[], &[])])).unwrap_err();
        assert!(
            e.contains("sender 2 (b)") && e.contains("same token"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_key_is_refused() {
        let e =
            Senders::parse(&format!("{}tables = []\n", file(&[("a", "t", &[], &[])]))).unwrap_err();
        assert!(e.contains("tables"), "{e}");
    }
}
