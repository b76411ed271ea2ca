//! The `[sync]` section of a store configuration file (`store.toml` at the local store's
//! root, or the file `--config` names), with the record's defaults. A value the record
//! forbids (a count or size of 0) fails the parse naming its key; an unknown key fails too,
//! so a misspelt setting never silently keeps its default.

use std::time::Duration;

use crate::LakeError;

/// The store configuration file a local store keeps at its root (never pushed or pulled).
pub const STORE_TOML: &str = "store.toml";

/// How a push and a pull behave (`[sync]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncConfig {
    /// Consecutive manifest commit rounds that meet no newer generation before a push gives
    /// up (`store.merge.retries`; default 5, at least 1).
    pub push_retries: u32,
    /// How many newest generation manifests the bucket keeps, the current one included
    /// (`store.collect.retain-generations`; default 64, at least 1).
    pub retain_generations: u32,
    /// The bytes of lazily fetched parts a local store keeps (`store.pull.part-cache`;
    /// default 8 GiB, at least 1).
    pub part_cache_bytes: u64,
    /// Whether a pull leaves data parts in the bucket for the first read to fetch
    /// (`store.pull.lazy-parts`; default false; `dogana pull --lazy` sets it for one pull).
    pub lazy_parts: bool,
    /// How long a tombstone stays in the bucket manifest after the deletion it records
    /// (`store.merge.collected`; default 7 days, at least 1 second).
    pub tombstone_ttl: Duration,
    /// How long a push's lease on a bucket table lasts unrenewed (renewed every third of it
    /// while the push uploads; a push that dies holds the table this long at most). Default
    /// 60 s, as a delivery's lease.
    pub lease_ttl: Duration,
    /// The bucket a store on a disposable disk drains into: every publication is marked
    /// unpushed there before it commits locally, and the next command pushes it
    /// (`store.drain.mark`; default none).
    pub drain_to: Option<String>,
}

impl Default for SyncConfig {
    fn default() -> Self {
        SyncConfig {
            push_retries: 5,
            retain_generations: 64,
            part_cache_bytes: 8 << 30,
            lazy_parts: false,
            tombstone_ttl: Duration::from_secs(7 * 86_400),
            lease_ttl: Duration::from_secs(60),
            drain_to: None,
        }
    }
}

fn invalid(field: &'static str, value: &toml::Value, reason: &'static str) -> LakeError {
    let mut v = value.to_string();
    if v.len() > 80 {
        let mut cut = 80;
        while !v.is_char_boundary(cut) {
            cut -= 1;
        }
        v.truncate(cut);
    }
    LakeError::ConfigInvalid {
        field,
        value: v,
        rule: "store.sync.config",
        reason,
    }
}

/// A whole number of at least 1.
fn positive(field: &'static str, v: &toml::Value) -> Result<u64, LakeError> {
    match v.as_integer() {
        Some(n) if n >= 1 => Ok(n as u64),
        Some(_) => Err(invalid(
            field,
            v,
            "must be at least 1 (the record forbids 0)",
        )),
        None => Err(invalid(field, v, "must be a whole number")),
    }
}

/// A byte count: a whole number, or a string `N`, `NKiB`, `NMiB`, `NGiB`, `NTiB`.
fn bytes(field: &'static str, v: &toml::Value) -> Result<u64, LakeError> {
    if v.is_integer() {
        return positive(field, v);
    }
    let Some(s) = v.as_str() else {
        return Err(invalid(
            field,
            v,
            "must be a byte count: 1073741824 or \"1GiB\"",
        ));
    };
    let s = s.trim();
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => {
            return Err(invalid(
                field,
                v,
                "the unit is one of B, KiB, MiB, GiB, TiB",
            ))
        }
    };
    match digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
    {
        Some(0) => Err(invalid(
            field,
            v,
            "must be at least 1 byte (the record forbids 0)",
        )),
        Some(n) => Ok(n),
        None => Err(invalid(
            field,
            v,
            "must be a byte count: 1073741824 or \"1GiB\"",
        )),
    }
}

/// A duration: whole seconds, or a string `Nms`, `Ns`, `Nm`, `Nh`, `Nd`.
fn duration(field: &'static str, v: &toml::Value) -> Result<Duration, LakeError> {
    if v.is_integer() {
        return positive(field, v).map(Duration::from_secs);
    }
    let Some(s) = v.as_str() else {
        return Err(invalid(field, v, "must be a duration: 604800 or \"7d\""));
    };
    let s = s.trim();
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let scale: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(invalid(field, v, "the unit is one of ms, s, m, h, d")),
    };
    match digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
    {
        Some(0) => Err(invalid(
            field,
            v,
            "must be more than 0 (the record forbids 0)",
        )),
        Some(n) => Ok(Duration::from_millis(n)),
        None => Err(invalid(field, v, "must be a duration: 604800 or \"7d\"")),
    }
}

impl SyncConfig {
    /// Parses a store configuration file's text: its `[sync]` section over the defaults.
    ///
    /// ```
    /// use dogana_lake::sync::SyncConfig;
    /// let c = SyncConfig::parse("[sync]\npush_retries = 3\npart_cache_bytes = \"512MiB\"\n").unwrap();
    /// assert_eq!(c.push_retries, 3);
    /// assert_eq!(c.part_cache_bytes, 512 << 20);
    /// assert_eq!(c.retain_generations, 64);
    /// assert!(SyncConfig::parse("[sync]\nretain_generations = 0\n").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<SyncConfig, LakeError> {
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            invalid(
                "store.toml",
                &toml::Value::String(e.message().into()),
                "does not parse as TOML",
            )
        })?;
        let mut c = SyncConfig::default();
        for (name, v) in &doc {
            if name != "sync" {
                return Err(invalid(
                    "store.toml",
                    &toml::Value::String(name.clone()),
                    "the only section this build reads is [sync]",
                ));
            }
            let Some(sync) = v.as_table() else {
                return Err(invalid("sync", v, "must be a table: [sync]"));
            };
            for (key, v) in sync {
                match key.as_str() {
                    "push_retries" => {
                        c.push_retries = u32::try_from(positive("sync.push_retries", v)?)
                            .map_err(|_| invalid("sync.push_retries", v, "must be below 2^32"))?
                    }
                    "retain_generations" => {
                        c.retain_generations =
                            u32::try_from(positive("sync.retain_generations", v)?).map_err(
                                |_| invalid("sync.retain_generations", v, "must be below 2^32"),
                            )?
                    }
                    "part_cache_bytes" => c.part_cache_bytes = bytes("sync.part_cache_bytes", v)?,
                    "lazy_parts" => {
                        c.lazy_parts = v
                            .as_bool()
                            .ok_or_else(|| invalid("sync.lazy_parts", v, "must be true or false"))?
                    }
                    "tombstone_ttl" => c.tombstone_ttl = duration("sync.tombstone_ttl", v)?,
                    "lease_ttl" => c.lease_ttl = duration("sync.lease_ttl", v)?,
                    "drain_to" => match v.as_str() {
                        Some(u) if u.contains("://") => c.drain_to = Some(u.to_owned()),
                        _ => {
                            return Err(invalid(
                                "sync.drain_to",
                                v,
                                "must be a bucket URL: \"s3://bucket/prefix\"",
                            ))
                        }
                    },
                    other => {
                        return Err(invalid(
                            "sync",
                            &toml::Value::String(other.to_owned()),
                            "unknown key; [sync] takes push_retries, retain_generations, part_cache_bytes, lazy_parts, tombstone_ttl, lease_ttl, drain_to",
                        ))
                    }
                }
            }
        }
        Ok(c)
    }

    /// The configuration of the local store at `dir`: its `store.toml` when it has one, the
    /// defaults otherwise.
    pub fn of_store(dir: &std::path::Path) -> Result<SyncConfig, LakeError> {
        match std::fs::read_to_string(dir.join(STORE_TOML)) {
            Ok(text) => SyncConfig::parse(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SyncConfig::default()),
            Err(e) => Err(e.into()),
        }
    }
}
