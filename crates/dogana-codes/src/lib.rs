//! # dogana-codes: errors a machine can act on
//!
//! Every error dogana reports carries a stable [`Code`]: `DGN-` and three digits that never
//! change meaning, whatever the message's wording becomes. An orchestrator (Airflow, Dagster,
//! a shell loop) reads the code, or just the exit status its [`Kind`] gives, to tell a
//! **refusal**, which retrying cannot fix, from a **transient** failure, which it can:
//!
//! | kind | exit status | retry? |
//! | --- | --- | --- |
//! | [`Kind::Refusal`] | 1 | no: fix the input, the store or the call |
//! | [`Kind::Usage`] | 2 | no: the command is called wrongly |
//! | [`Kind::Transient`] | 3 | yes, later: nothing was decided and nothing changed |
//!
//! A transient code is never used for a decision: a rejected delivery is
//! [`DELIVERY_REJECTED`], a refusal, whatever made it fail.
//!
//! The table of every code is [`ALL`]; `docs/errors.md` is generated from it
//! ([`markdown`]) and a test keeps the two equal.
//!
//! ```
//! use dogana_codes::{Kind, STORE_LOCKED};
//! assert_eq!(STORE_LOCKED.id, "DGN-401");
//! assert_eq!(STORE_LOCKED.kind, Kind::Transient);
//! assert_eq!(STORE_LOCKED.kind.exit_status(), 3);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::fmt;

/// Whether retrying can help, and the exit status that says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// dogana refuses: the input, the store or the request is wrong, and retrying the same
    /// call gives the same answer. Exit status 1.
    Refusal,
    /// The command is called wrongly (an unknown option, a missing argument). Exit status 2.
    Usage,
    /// Nothing was decided and nothing changed, for a reason outside the call: a lost
    /// connection, a lock held past the wait, a server that did not answer, a full disk.
    /// Retrying later can succeed. Exit status 3.
    Transient,
}

impl Kind {
    /// The exit status of a command that ends with an error of this kind.
    pub fn exit_status(self) -> u8 {
        match self {
            Kind::Refusal => 1,
            Kind::Usage => 2,
            Kind::Transient => 3,
        }
    }

    /// `refusal`, `usage` or `transient`, as JSON errors name it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Refusal => "refusal",
            Kind::Usage => "usage",
            Kind::Transient => "transient",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One stable error code: its identifier, its kind, what it means and what to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Code {
    /// `DGN-` and three digits: the hundreds are the area (0 the call, 1 the files and
    /// options, 2 a delivery, 3 the store, 4 transient failures, 5 planning and service levels,
    /// 6 the lake store, 7 the receiving service).
    pub id: &'static str,
    /// The Rust name of the constant, as the sources use it.
    pub name: &'static str,
    /// Whether retrying can help.
    pub kind: Kind,
    /// What it means, in one sentence.
    pub meaning: &'static str,
    /// What to do about it.
    pub action: &'static str,
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id)
    }
}

macro_rules! codes {
    ($( $(#[$doc:meta])* $name:ident = $id:literal, $kind:ident, $meaning:literal, $action:literal; )*) => {
        $(
            $(#[$doc])*
            pub const $name: Code = Code {
                id: $id,
                name: stringify!($name),
                kind: Kind::$kind,
                meaning: $meaning,
                action: $action,
            };
        )*
        /// Every code, in the order of their identifiers.
        pub const ALL: &[Code] = &[$($name),*];
    };
}

codes! {
    /// The command line is called wrongly.
    USAGE = "DGN-001", Usage,
        "The command is called wrongly: an unknown command or option, a missing argument.",
        "Read the usage line and `dogana COMMAND --help`; fix the call.";

    /// A file named on the command line cannot be read.
    FILE_UNREADABLE = "DGN-101", Refusal,
        "A file named on the command line cannot be read: it does not exist, is a directory, or this user may not read it.",
        "Name an existing file this user can read.";
    /// A contract is refused.
    CONTRACT_INVALID = "DGN-102", Refusal,
        "The contract (JSON, or its TOML form) is refused: it does not parse, or a field breaks a rule the message names.",
        "Fix the field the message names (docs/contract-toml.md).";
    /// A manifest is refused.
    MANIFEST_INVALID = "DGN-103", Refusal,
        "The manifest is refused: it does not parse, or its declarations disagree with each other or with the contract.",
        "Fix the field the message names, or write the manifest again with `dogana manifest`.";
    /// A ledger document is refused.
    LEDGER_INVALID = "DGN-104", Refusal,
        "The ledger document is refused: it does not parse or breaks a rule of the ledger.",
        "Export the ledger again (`dogana ledger --store S TABLE`).";
    /// A document (receipt, claims, any wire kind) is refused.
    DOCUMENT_INVALID = "DGN-105", Refusal,
        "A document is not JSON, not a dogana document, or not valid for its kind.",
        "Pass a document dogana wrote, unchanged.";
    /// An option's value is refused.
    OPTION_INVALID = "DGN-106", Refusal,
        "An option's value is refused: a time without a UTC offset, a window bound of the wrong type, an unknown column type, a number out of range.",
        "Write the value as the message shows.";
    /// The output file exists.
    OUTPUT_EXISTS = "DGN-107", Refusal,
        "The output file exists and would be replaced.",
        "Pass --force to replace it, or -o to write elsewhere.";
    /// The output cannot be written.
    OUTPUT_UNWRITABLE = "DGN-108", Refusal,
        "The output cannot be written: its directory is missing or not writable.",
        "Name a writable place with -o.";
    /// A file does not match its manifest.
    FILE_MISMATCH = "DGN-109", Refusal,
        "The delivered file does not match its manifest: its SHA-256 is not the manifest's content_hash.",
        "Deliver the file the manifest describes, or write a new manifest.";
    /// A group file is refused.
    GROUP_INVALID = "DGN-110", Refusal,
        "The group file, or the files given with it, do not make a group: a contract is missing, a table repeats, or a file's manifest names a table the group does not hold.",
        "List every table's contract once in the group file, and give one file per table.";
    /// The data contract columns are read from is refused.
    DATA_CONTRACT_INVALID = "DGN-111", Refusal,
        "The data contract a contract's columns are read from (an ODCS document, a dbt manifest, a Parquet file) is refused: it does not parse, or holds no such schema object or model.",
        "Fix the document, or name a schema object or model it holds (the message lists them).";
    /// A column's type has no dogana name.
    COLUMN_TYPE_UNMAPPED = "DGN-112", Refusal,
        "A column read from an ODCS document, a dbt manifest, a live table or a Parquet file has no type, or a type with no dogana name (a nested type, a time of day, a decimal without precision); nothing is guessed.",
        "Declare the column's type as one the table in docs/contract-toml.md maps, or list the columns by hand.";

    /// The gate rejected the delivery.
    DELIVERY_REJECTED = "DGN-201", Refusal,
        "The gate rejected the delivery: a check failed. The receipt is kept; nothing was published.",
        "Read the failed checks (`dogana receipts`), fix the file or its manifest, and deliver again.";
    /// The column hash needs types the receiver does not have.
    COLUMN_TYPES_REQUIRED = "DGN-202", Refusal,
        "The column hash needs the type of every column, and the contract does not type them all.",
        "Pass --column-type NAME=TYPE for each, or list them in the TOML contract's columns.";
    /// The file's format is unknown, or not in this build.
    FORMAT_UNSUPPORTED = "DGN-203", Refusal,
        "The delivered file's format is not known from its name, or this build cannot read it (Parquet without the parquet feature).",
        "Name it with --format csv, ndjson or parquet, or use a build with Parquet.";
    /// The contract cannot follow the stored history.
    CONTRACT_CONFLICT = "DGN-204", Refusal,
        "The contract changes a field the stored history fixes (the table's key, window, deleted column or their types).",
        "Deliver under the contract the store holds, or to a new table.";
    /// The store holds the table, but dogana did not create it.
    FOREIGN_TABLE = "DGN-205", Refusal,
        "The store holds a table of this name that dogana did not create; a delivery would replace rows nobody delivered.",
        "Deliver to a new store or table name, or adopt the table with --adopt.";
    /// The table name cannot be a table of this store.
    TABLE_NAME_UNUSABLE = "DGN-206", Refusal,
        "The table name cannot be a table here: empty, reserved, or equal to another table's name but for letter case.",
        "Deliver under the name the store holds (the message names it), or under a name no table shares in any letter case.";
    /// A group delivery conflicts with the groups the store holds.
    GROUP_CONFLICT = "DGN-207", Refusal,
        "A table of the group belongs to another group the store holds, or the parts do not match the group's tables.",
        "Deliver the table with the group it belongs to.";

    /// The store does not exist.
    STORE_MISSING = "DGN-301", Refusal,
        "A reader named a store that does not exist.",
        "Name an existing store, or deliver a file to create it.";
    /// The store is not a dogana store.
    NOT_A_STORE = "DGN-302", Refusal,
        "The file, database or directory named is not a dogana store (or not of this backend); nothing in it was changed.",
        "Name a store dogana made, or a new path.";
    /// The store spec is refused.
    STORE_SPEC_INVALID = "DGN-303", Refusal,
        "The --store value names no usable place: an empty path, the filesystem root, an in-memory database that would vanish, a directory where a file is expected.",
        "Name the store's file, directory or URL in full.";
    /// The store needs a backend this build lacks.
    BACKEND_NOT_BUILT = "DGN-304", Refusal,
        "The store needs a backend this build of dogana does not have.",
        "Build dogana with the feature the message names (scripts/build-full.sh builds every backend).";
    /// The store has no such table.
    TABLE_UNKNOWN = "DGN-305", Refusal,
        "The store holds no receipt and no ledger for the table.",
        "Name one of the tables the message lists.";
    /// The store is inconsistent.
    STORE_INCONSISTENT = "DGN-306", Refusal,
        "A stored document does not read back, or the store's parts disagree in a way that stops the operation.",
        "Run `dogana verify --store S` to see what differs; restore the store from a copy.";
    /// The stored ledger is not the fold of its receipts.
    VERIFY_MISMATCH = "DGN-307", Refusal,
        "A stored ledger differs from the fold of its accepted receipts (RECV-12).",
        "Deliver a complete whole-table read; rebuilding the ledger recovers no rows.";
    /// The store failed for a reason that retrying will not fix.
    STORE_FAILED = "DGN-308", Refusal,
        "The store's database refused the operation for a reason retrying will not fix (a read-only file, a permission, a value it cannot hold); nothing was committed.",
        "Read the database's message that follows; fix the store or its permissions.";
    /// The database holds no such table.
    TABLE_NOT_FOUND = "DGN-309", Refusal,
        "The database named holds no table or view of that name to read columns from.",
        "Name a table or view the database holds (in Postgres, in the URL's schema).";
    /// The object store refused the process's credentials.
    CREDENTIALS_REFUSED = "DGN-310", Refusal,
        "The bucket (S3, GCS, Azure) refused the credentials this process holds: wrong, expired, or without the permission the operation needs (HTTP 401 or 403); nothing was written.",
        "Set the credentials the bucket expects (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AZURE_STORAGE_ACCOUNT_KEY, GOOGLE_APPLICATION_CREDENTIALS) and run again.";

    /// A lock or lease on the store was held past the wait.
    STORE_LOCKED = "DGN-401", Transient,
        "Another writer held the store's lock or the table's lease past the wait; nothing was decided.",
        "Retry when the other writer is done, or wait longer with --lock-timeout.";
    /// The store's server did not answer, or the connection was lost.
    CONNECTION_LOST = "DGN-402", Transient,
        "The store's server did not answer, refused the connection, or the connection was lost; nothing was committed.",
        "Retry later; check the server is up and reachable.";
    /// The disk is full.
    DISK_FULL = "DGN-403", Transient,
        "The disk or the database's quota is full; nothing was committed.",
        "Free space, then retry.";
    /// An upload that stalled.
    REQUEST_TIMEOUT = "DGN-404", Transient,
        "The upload sent nothing for longer than the service's request timeout; nothing was staged or decided.",
        "Send the delivery again.";
    /// The service is stopping.
    SHUTTING_DOWN = "DGN-405", Transient,
        "The receiving service is shutting down and takes no new delivery; those in flight finish.",
        "Send the delivery again once the service is back.";
    /// A push or pull met the bucket manifest moving under it past its retries.
    SYNC_CONTENDED = "DGN-406", Transient,
        "A push's manifest commit or a pull's reading of the bucket kept losing to other pushes (the bucket manifest moved under it); what it uploaded or verified is kept.",
        "Run the push or pull again; it resumes from what it kept.";
    /// A part of a lazily pulled store could not be fetched.
    PART_UNAVAILABLE = "DGN-407", Transient,
        "A lazily pulled lake store could not fetch a part from its bucket within 30 seconds.",
        "Check the bucket is reachable and the credentials are set, then read again.";

    /// The planner cannot plan the request.
    PLANNING_REFUSED = "DGN-501", Refusal,
        "The planner cannot plan the request: a requirement the contract's shapes cannot meet, or a window outside the table.",
        "Read the message; ask for dates a shape can prove, or name another shape.";
    /// A service level is missed.
    SLA_MISSED = "DGN-502", Refusal,
        "A service level of the ODCS document (latency, frequency) is missed: the table's claims do not meet it now.",
        "Deliver a read that proves the table complete (`dogana plan` names one), then check again.";

    /// A lake snapshot was reclaimed by a collection.
    PART_COLLECTED = "DGN-601", Refusal,
        "The lake snapshot read was reclaimed by a collection: its manifest is kept, its parts deleted.",
        "Read a retained snapshot (the current one, or one of the newest retain_generations).";
    /// A write to a lake replica.
    REPLICA_WRITE_REFUSED = "DGN-602", Refusal,
        "The lake store named is a read-only replica.",
        "Write to the canonical store its replica.json names.";
    /// A lake column type outside the schema lattice.
    SCHEMA_INCOMPATIBLE = "DGN-603", Refusal,
        "A column's arriving type does not meet its stored type in the lake's schema lattice, or a key column would widen.",
        "Deliver the column in its stored type, or to a new table.";
    /// A lake store's configuration is refused.
    CONFIG_INVALID = "DGN-604", Refusal,
        "A lake store setting is outside what it allows (a retain_generations of 0, an unknown key).",
        "Fix the setting the message names.";
    /// A lake store of a newer format.
    FORMAT_NEWER = "DGN-605", Refusal,
        "A lake store's manifest or pointer has a newer format than this build reads.",
        "Use a newer build of dogana.";
    /// The object store cannot coordinate writers.
    COORDINATION_UNPROVEN = "DGN-606", Refusal,
        "The object store did not show the conditional writes that keep writers apart.",
        "Use a bucket or server that supports conditional writes (If-Match, If-None-Match).";
    /// A replica refresh refused.
    REPLICA_REFUSED = "DGN-607", Refusal,
        "A replica refresh is refused: the replica belongs to another store, its target is a store, a part is missing, or its pointer left the store's chain.",
        "Read the message: refresh into an empty directory, or pass --adopt where it says so.";
    /// A push or pull refused.
    SYNC_REFUSED = "DGN-608", Refusal,
        "A push or pull is refused: the bucket belongs to another store, its manifest does not parse, an object does not hash to its listed digest, or a fold's parts exceed the part cache; nothing was published.",
        "Read the message: it names the object or setting; push to this store's bucket, or pull into an empty directory.";

    /// A request to the receiving service without a valid bearer token.
    UNAUTHORIZED = "DGN-701", Refusal,
        "The request to `dogana serve` carries no bearer token, or one no sender in the tokens file holds.",
        "Send `Authorization: Bearer TOKEN` with the token whose SHA-256 the receiver's tokens file lists.";
    /// A table the sender is not granted.
    FORBIDDEN = "DGN-702", Refusal,
        "The sender is not granted this table for this request (deliver or read); whether the table exists is not said.",
        "Ask the receiving team to grant the table to your sender name in their tokens file.";
    /// A request body that is not a delivery.
    REQUEST_INVALID = "DGN-703", Refusal,
        "The request is not what the route takes: a multipart body without its manifest or file part, an unknown part, a table or file name that could leave its folder, a query value of the wrong type.",
        "Send the parts and values the message names (GET /v1/openapi.json describes every route).";
    /// A delivery over the service's size limit.
    TOO_LARGE = "DGN-704", Refusal,
        "The delivery is larger than the receiving service's --max-bytes; nothing was staged.",
        "Send a smaller file (a window or changes instead of a full read), or ask for a higher limit.";
    /// The service's own configuration is refused.
    SERVICE_CONFIG_INVALID = "DGN-705", Refusal,
        "The receiving service's tokens file, contracts folder or listen address is refused: the message names the file, the entry and the rule.",
        "Fix the entry the message names; on SIGHUP the service keeps its last good configuration until then.";
}

/// The code whose identifier is `id`, if there is one.
///
/// ```
/// assert_eq!(dogana_codes::by_id("DGN-201"), Some(dogana_codes::DELIVERY_REJECTED));
/// assert_eq!(dogana_codes::by_id("DGN-999"), None);
/// ```
pub fn by_id(id: &str) -> Option<Code> {
    ALL.iter().copied().find(|c| c.id == id)
}

/// `docs/errors.md`: the table of every code, generated from [`ALL`].
pub fn markdown() -> String {
    let mut out = String::from(
        "# Error codes\n\n\
         <!-- generated from crates/dogana-codes/src/lib.rs by \
         `cargo run -q -p dogana-codes --example errors_md > docs/errors.md`; \
         a test fails when they differ -->\n\n\
         Every error dogana reports carries one of these codes: on the command line as \
         `error[DGN-…]: …` on standard error, or, with `--json`, as the `code` of one JSON \
         object on standard error. A code never changes meaning.\n\n\
         The exit status tells what kind of error it is: **1** a refusal (retrying the same \
         call gives the same answer), **2** the command is called wrongly, **3** a transient \
         failure: nothing was decided and nothing changed, and retrying later can succeed. A \
         transient code is never used for a decision: a rejected delivery is `DGN-201`.\n\n\
         | code | kind | exit | meaning | what to do |\n\
         | --- | --- | --- | --- | --- |\n",
    );
    for c in ALL {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            c.id,
            c.kind,
            c.kind.exit_status(),
            c.meaning,
            c.action
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_unique_ordered_and_formed() {
        let ids: Vec<&str> = ALL.iter().map(|c| c.id).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(ids, sorted, "codes are listed once each, in order");
        for c in ALL {
            assert!(
                c.id.len() == 7
                    && c.id.starts_with("DGN-")
                    && c.id[4..].bytes().all(|b| b.is_ascii_digit()),
                "{}",
                c.id
            );
        }
    }

    #[test]
    fn the_area_matches_the_kind() {
        // the 4xx area holds exactly the transient codes, the 0xx the usage ones
        for c in ALL {
            assert_eq!(
                c.id.starts_with("DGN-4"),
                c.kind == Kind::Transient,
                "{}",
                c.id
            );
            assert_eq!(c.id.starts_with("DGN-0"), c.kind == Kind::Usage, "{}", c.id);
        }
    }
}
