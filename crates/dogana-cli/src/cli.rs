//! The command line's grammar (clap derive). Parsing here only checks the call's shape; every
//! value the contract types (times, windows, positions) is read by the command, so that a wrong
//! value is a refusal (exit 1) and a wrong call a usage error (exit 2).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::typed;

const MAIN_EXAMPLES: &str = "\
Examples:
  dogana contract orders.toml -o orders.contract.json
  dogana manifest orders.csv --contract orders.toml --shape full \\
      --produced-at 2026-10-26T06:00:00Z --rows 1000
  dogana check orders.csv --contract orders.toml
  dogana claims ledger.json --at 2026-10-27T00:00:00Z --limit-days 2
  dogana deliver orders.csv --store orders.db --contract orders.toml
  dogana receipts --store orders.db orders
  dogana verify --store orders.db
  dogana claims --store orders.db orders --limit-days 2
  dogana show --store orders.db orders -o orders.html
  dogana contract --odcs orders.odcs.yaml --schema orders
  dogana sla --store orders.db --odcs orders.odcs.yaml

Exit status: 0 success, 1 dogana refuses (invalid contract, manifest or ledger, a mismatch,
an unreadable file, an existing manifest, a rejected delivery, a store that fails verify),
2 the command is called wrongly.";

const MANIFEST_EXAMPLES: &str = "\
Examples:
  # a full export, read at 06:00 UTC: writes orders.csv.json
  dogana manifest orders.csv --contract orders.toml --shape full \\
      --produced-at 2026-10-26T06:00:00Z --rows 1000
  # a rolling window shape: the window ends at --produced-at
  dogana manifest last3.csv --contract orders.toml --shape last3 \\
      --produced-at 2026-10-26T06:00:00+02:00 --rows 120
  # an explicit window, typed by the window column (here a date)
  dogana manifest oct.csv --contract orders.toml --shape last3 \\
      --produced-at 2026-10-26T06:00:00Z --rows 900 --window 2026-10-01 2026-10-25
  # changes with tombstones since the last read, replacing an existing manifest
  dogana manifest changes.csv --contract orders.toml --shape changes \\
      --produced-at 2026-10-26T06:00:00Z --since 2026-10-25T06:00:00Z \\
      --rows 12 --tombstones 1 --force
  # to standard output
  dogana manifest orders.csv --contract orders.toml --shape full \\
      --produced-at 2026-10-26T06:00:00Z --rows 1000 -o -

TIME is RFC 3339 with a UTC offset (Z or +HH:MM); a TIME without one is refused (exit 1).
--produced-at is the instant the source was read, never when this command runs.";

const CHECK_EXAMPLES: &str = "\
Examples:
  # reads orders.csv.json, prints `orders.csv: manifest valid for orders/full; content_hash matches`
  dogana check orders.csv --contract orders.toml
  dogana check orders.csv --contract orders.contract.json --manifest incoming/orders.json --json

Rows are not checked: the receiver counts them (CLI-18).";

const CLAIMS_EXAMPLES: &str = "\
Examples:
  dogana claims ledger.json
  dogana claims ledger.json --at 2026-10-27T00:00:00Z --limit-days 1.5
  dogana claims ledger.json --window 2026-10-01 2026-10-31 --json
  # the ledger a receiver's store holds for table orders
  dogana claims --store orders.db orders --limit-days 2

Prints one line per region, then the table's state and its exact instant:
  orders [2026-09-27, 2026-10-26]: complete; complete as of 2026-10-26T06:00:00+00:00; deletions as of 2026-10-26T06:00:00+00:00
  orders: unknown; exact at no single instant";

const DELIVER_EXAMPLES: &str = "\
Examples:
  # reads orders.csv.json; prints the outcome, every check, the plan and the table's claims
  dogana deliver orders.csv --store orders.db --contract orders.toml
  dogana deliver changes.csv --store orders.db --contract orders.toml \\
      --manifest incoming/changes.json --at 2026-10-26T06:05:00Z --source sftp
  # the receipt's wire document
  dogana deliver orders.csv --store orders.db --contract orders.toml --json

Exit status: 0 accepted or replayed (the same manifest accepted before), 1 rejected (the
receipt is kept: dogana receipts) or refused (nothing stored), 2 the command is called wrongly.
A delivery taking more than a second shows a spinner on standard error when it is a terminal.";

const RECEIPTS_EXAMPLES: &str = "\
Examples:
  dogana receipts --store orders.db orders
  dogana receipts --store orders.db orders --json

One line per receipt, in the order they were stored: seq, outcome, shape, produced_at, the
publication id after it (12 characters) and the failed checks:
  1 accepted full 2026-10-25T06:00:00+00:00 publication 77bf8492138a
  2 accepted changes 2026-10-26T06:00:00+00:00 publication 6b1b6c122507
  3 rejected changes 2026-10-27T06:00:00+00:00 publication 6b1b6c122507 failed: rows: the read holds 3 live rows and 0 tombstones; the manifest declares 4 and 0";

const SERVE_EXAMPLES: &str = "\
Examples:
  dogana serve --store receiver.db --contracts contracts/ --tokens senders.toml
  dogana serve --store postgres://dogana@db/warehouse --contracts contracts/ --tokens senders.toml \\
      --listen 0.0.0.0:8443 --tls-cert cert.pem --tls-key key.pem

contracts/ holds one contract per table, TABLE.toml or TABLE.json. senders.toml has one
[[sender]] per sender: name, token_sha256 (the hex SHA-256 of its bearer token, never the
token), deliver = [tables], read = [tables]. Both are read again on SIGHUP. A sender posts
a multipart body (manifest, then file) to /v1/tables/TABLE/deliveries:

  curl -H \"Authorization: Bearer $TOKEN\" -F manifest=@orders.csv.json -F file=@orders.csv \\
      http://127.0.0.1:8630/v1/tables/orders/deliveries

200 accepted or replayed, 422 rejected (the receipt is kept), 401 no valid token, 403 a
table not granted, 413 over --max-bytes. GET /v1/openapi.json lists every route. Plain HTTP
only on loopback unless --insecure-listen. SIGTERM finishes the deliveries in flight, then
exits. Logs are JSON lines on standard error. A build with the serve feature.";

const WATCH_EXAMPLES: &str = "\
Examples:
  dogana watch /srv/landing --store receiver.db --contracts contracts/
  dogana watch /srv/landing --store receiver.db --contracts contracts/ --once --json

A sender writes FILE, then FILE.json (its manifest; best written elsewhere and renamed in).
Once the manifest parses and both have stayed unchanged for --stable-for seconds, FILE is
delivered and moved to accepted/ or rejected/ with FILE.receipt.json beside it (a refusal:
FILE.error.json). Restarted, the watcher redelivers what is still there; the store answers
with the first receipt, so nothing is delivered twice. A build with the serve feature.";

const FOLD_EXAMPLES: &str = "\
Examples:
  dogana fold --store file:///data/lake          # every table
  dogana fold --store s3://bucket/lake orders

A fold takes each table's lease, merges 4 parts of one size tier (row counts between
consecutive powers of 4) into one until every tier holds fewer than 4, and publishes a
snapshot with the same rows, ledger and receipts. Lake stores only (a build with the lake
feature).";

const COLLECT_EXAMPLES: &str = "\
Examples:
  dogana collect --store file:///data/lake
  dogana collect --store s3://bucket/lake orders --retain-generations 8

Under each table's lease, keeps the newest N snapshots whole (the current one included) and
every part they name; deletes every other part, after recording what it deletes and marking
each snapshot it reclaims. Every snapshot manifest, receipt and ledger is kept, so verify
still folds the accepted receipts. Lake stores only (a build with the lake feature).";

const REPLICATE_EXAMPLES: &str = "\
Examples:
  dogana replicate --from s3://bucket/lake --to /data/replica
  dogana replicate --from s3://bucket/lake --to /data/replica orders
  dogana receipts --store file:///data/replica orders    # readers read the replica

Copies each table's current snapshot whole (manifest, Parquet parts, receipts), verifies
every part on disk, and only then writes the tables' local pointers, which advance only along
the store's chain (--adopt replaces a pointer off it). replica.json names the store and every
snapshot held. Write verbs on a replica are refused. Lake stores only (the lake feature).";

const PUSH_EXAMPLES: &str = "\
Examples:
  dogana deliver orders.csv --store file:///data/lake --contract orders.toml
  dogana push --store file:///data/lake --to s3://bucket/lake

Uploads each table's published objects the bucket manifest does not list, moves the bucket
pointer to the local head under the table's lease in the bucket, then commits the bucket
manifest (SHA-256, size and owner of every object) by a conditional replace. A table whose
local head does not extend the bucket's head stays local, with its receipts, and is named
(store.push.pointer-fenced): pull --adopt TABLE, then deliver those files again. Keys this
node pushed and has since deleted (dogana collect) are tombstoned, signed with the node's key.
[sync] settings come from DIR/store.toml or --config. A store whose store.toml names
drain_to (a disposable disk) marks each delivery unpushed in that bucket before it commits;
every later command pushes first, and stops naming the deliveries it cannot push (or those
lost with an earlier disk: deliver them again, then push --forget-lost).";

const PULL_EXAMPLES: &str = "\
Examples:
  dogana pull --store file:///data/lake --from s3://bucket/lake
  dogana pull --store file:///srv/cold --from s3://bucket/lake --lazy
  dogana pull --store file:///data/lake --from s3://bucket/lake --adopt orders

Downloads every listed object that differs here, each checked against its SHA-256, then writes
each table's pointer, once all its objects are home (pointer-last). --lazy leaves the Parquet
parts in the bucket: the first read fetches each one (30 s deadline), and the part cache keeps
at most part_cache_bytes of them. A refused pull keeps what it verified; run it again.";

const DUCKDB_SQL_EXAMPLES: &str = "\
Examples:
  dogana duckdb-sql --store file:///data/lake orders > orders.sql
  dogana duckdb-sql --store s3://bucket/lake orders | duckdb    # then: SELECT * FROM orders

Prints two views for DuckDB: <TABLE> over the Parquet files of the table's current snapshot
(a keyed table's later parts shadow earlier rows by key, so the view keeps each key's current
row only) and <TABLE>__regions over its ledger's regions, as dogana_regions shows them in the
SQL stores. The views name the files the pointer names now: print them again after the next
delivery. Lake stores only (the lake feature).";

const VERIFY_EXAMPLES: &str = "\
Examples:
  dogana verify --store orders.db          # every table
  dogana verify --store orders.db orders

Exit status: 0 when every stored ledger is the fold of its accepted receipts, 1 otherwise.";

const LEDGER_EXAMPLES: &str = "\
Examples:
  dogana ledger --store orders.db orders > ledger.json
  dogana ledger --store orders.db orders | dogana claims -";

const PLAN_EXAMPLES: &str = "\
Examples:
  # the cheapest read that makes orders complete and deletion-complete as of Tuesday 06:00
  dogana plan --store orders.db orders --complete-as-of 2026-10-27T06:00:00Z \\
      --deletions-as-of 2026-10-27T06:00:00Z
  # one read per table at one instant, so invoices and lines become exact together
  dogana plan --together --store shop.db invoices lines --json

Exit status: 0 a read is named, or the claims already meet the requirement; 1 no read can.";

const NEXT_EXAMPLES: &str = "\
Examples:
  dogana next --store orders.db orders --shape changes --until 2026-10-27T06:00:00Z
  dogana next --store orders.db orders --shape last3 --until 2026-10-27T06:00:00Z --json";

const SHOW_EXAMPLES: &str = "\
Examples:
  dogana show --store orders.db orders -o orders.html
  dogana show --store shop.db invoices lines --at 2026-10-27T00:00:00Z --limit-days 2 -o shop.html
  # a ledger document and the receipts dogana receipts --json exported
  dogana show --ledger ledger.json --receipts receipts.json -o orders.html

One self-contained HTML file (no network): the regions coloured by state at --at, the history
replayed from the receipts on a timeline, the refusals and their failed checks, the tables'
common exact instant, and whether the ledger is the fold of its receipts.";

const CONTRACT_EXAMPLES: &str = "\
Examples:
  dogana contract orders.toml                          # the wire document on standard output
  dogana contract orders.toml -o orders.contract.json  # written, with its identity and schema hash

  # the columns of an ODCS schema object, a dbt model, a live table, a Parquet file, and
  # their schema_hash
  dogana contract --odcs orders.odcs.yaml --schema orders
  dogana contract --dbt-manifest target/manifest.json --model orders
  dogana contract --from-table warehouse.duckdb orders
  dogana contract --from-parquet orders.parquet
  # a TOML contract whose columns come from an ODCS document
  dogana contract orders.toml --odcs orders.odcs.yaml --schema orders -o orders.contract.json

The TOML format, and the type each source's types map to, are in docs/contract-toml.md.";

const SLA_EXAMPLES: &str = "\
Examples:
  dogana sla --store orders.db --odcs orders.odcs.yaml
  dogana sla --store orders.db --odcs orders.odcs.yaml --at 2026-10-27T07:00:00Z --json

One line per schema object and service level: met, missed (since when), or not checkable
(and why). latency: the table's complete-as-of date (the least over its regions) is at most
that old; frequency: some region was proven complete at most that long ago
(docs/decisions.md, \"Service levels from the ledger\").

Exit status: 0 every checkable service level is met, 1 one is missed (DGN-502) or the call is
refused, 2 the command is called wrongly.";

const IDENTITY_EXAMPLES: &str = "\
Examples:
  dogana identity orders.csv.json        # Manifest 3f1c...
  dogana identity ledger.json            # Ledger 9a0b...
  cat receipt.json | dogana identity -";

const CANONICAL_EXAMPLES: &str = "\
Examples:
  dogana canonical orders.csv.json | sha256sum
  echo '{\"b\": 1.0, \"a\": [1e21]}' | dogana canonical -    # {\"a\":[1e+21],\"b\":1}";

const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  dogana completions bash > /etc/bash_completion.d/dogana
  dogana completions zsh > \"${fpath[1]}/_dogana\"
  dogana completions fish > ~/.config/fish/completions/dogana.fish";

/// What each delivery of a table proves: manifests, checks and claims.
#[derive(Debug, Parser)]
#[command(name = "dogana", version, after_help = MAIN_EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write FILE.json: the manifest of one read, with FILE's SHA-256
    #[command(
        after_help = MANIFEST_EXAMPLES,
        override_usage = "dogana manifest FILE --contract PATH --shape NAME --produced-at TIME --rows N [options]"
    )]
    Manifest(ManifestArgs),
    /// Check FILE against its manifest and the contract (not its rows)
    #[command(
        after_help = CHECK_EXAMPLES,
        override_usage = "dogana check FILE --contract PATH [--manifest PATH] [--json]"
    )]
    Check(CheckArgs),
    /// Print what a ledger (a document, or a store's) claims at a time, region by region
    #[command(
        after_help = CLAIMS_EXAMPLES,
        override_usage = "dogana claims LEDGER [--at TIME] [--limit-days DAYS] [--window LOW HIGH] [--json]\n       dogana claims --store DB TABLE [--at TIME] [--limit-days DAYS] [--window LOW HIGH] [--dates] [--json]\n       dogana claims --store DB TABLE TABLE... [--window TABLE=LOW,HIGH]... [--at TIME] [--limit-days DAYS] [--dates] [--json]"
    )]
    Claims(ClaimsArgs),
    /// Deliver FILE to a receiver's store: check it, publish it or reject it, keep the receipt
    #[command(
        after_help = DELIVER_EXAMPLES,
        override_usage = "dogana deliver FILE --store DB --contract PATH [--manifest PATH] [--at TIME] [--source TEXT] [--format FORMAT] [--column-type NAME=TYPE]... [--adopt] [--lock-timeout SECONDS] [--fold] [--json]"
    )]
    Deliver(DeliverArgs),
    /// List the receipts a store keeps for a table
    #[command(
        after_help = RECEIPTS_EXAMPLES,
        override_usage = "dogana receipts --store DB TABLE [--json]"
    )]
    Receipts(ReceiptsArgs),
    /// Check that each stored ledger is the fold of its accepted receipts
    #[command(
        after_help = VERIFY_EXAMPLES,
        override_usage = "dogana verify --store DB [TABLE]"
    )]
    Verify(VerifyArgs),
    /// Print the ledger document a store holds for a table
    #[command(
        after_help = LEDGER_EXAMPLES,
        override_usage = "dogana ledger --store DB TABLE"
    )]
    Ledger(LedgerArgs),
    /// Name the cheapest read that would meet a requirement, from a store's ledgers
    #[command(
        after_help = PLAN_EXAMPLES,
        override_usage = "dogana plan --store DB TABLE [--complete-as-of TIME] [--deletions-as-of TIME] [--window LOW HIGH] [--at NOW] [--json]\n       dogana plan --together --store DB TABLE TABLE... [--at NOW] [--json]"
    )]
    Plan(PlanArgs),
    /// Print the request for the next read of a table through one shape
    #[command(
        after_help = NEXT_EXAMPLES,
        override_usage = "dogana next --store DB TABLE --shape NAME --until TIME [--window LOW HIGH] [--json]"
    )]
    Next(NextArgs),
    /// Write one HTML page of tables: regions, history, refusals, exact instant
    #[command(
        after_help = SHOW_EXAMPLES,
        override_usage = "dogana show --store DB TABLE [TABLE...] [--at TIME] [--limit-days DAYS] -o FILE.html [--force]\n       dogana show --ledger LEDGER --receipts RECEIPTS [--at TIME] [--limit-days DAYS] -o FILE.html [--force]"
    )]
    Show(ShowArgs),
    /// Fold a lake store's tables: merge 4 small parts of one size tier into one, rows unchanged
    #[command(
        after_help = FOLD_EXAMPLES,
        override_usage = "dogana fold --store URL [TABLE]"
    )]
    Fold(FoldArgs),
    /// Collect a lake store: delete the parts only snapshots older than the retained ones name
    #[command(
        after_help = COLLECT_EXAMPLES,
        override_usage = "dogana collect --store URL [TABLE] [--retain-generations N]"
    )]
    Collect(CollectArgs),
    /// Keep a read-only local copy of a lake store's current snapshots
    #[command(
        after_help = REPLICATE_EXAMPLES,
        override_usage = "dogana replicate --from URL --to DIR [TABLE...] [--adopt]"
    )]
    Replicate(ReplicateArgs),
    /// Push a local lake store's tables to a shared bucket (one publication chain per table)
    #[command(
        after_help = PUSH_EXAMPLES,
        override_usage = "dogana push --store DIR --to BUCKET_URL [--config FILE] [--forget-lost] [--json]"
    )]
    Push(PushArgs),
    /// Pull a bucket's tables into a local lake store, whole or lazily
    #[command(
        after_help = PULL_EXAMPLES,
        override_usage = "dogana pull --store DIR --from BUCKET_URL [--lazy] [--tables T...] [--adopt T]... [--config FILE] [--json]"
    )]
    Pull(PullArgs),
    /// Print the DuckDB SQL that reads a lake table's current snapshot and its regions
    #[command(
        name = "duckdb-sql",
        after_help = DUCKDB_SQL_EXAMPLES,
        override_usage = "dogana duckdb-sql --store URL TABLE"
    )]
    DuckdbSql(DuckdbSqlArgs),
    /// Receive deliveries over HTTP: senders push, the same gate decides (the serve feature)
    #[command(
        after_help = SERVE_EXAMPLES,
        override_usage = "dogana serve --store DB --contracts DIR --tokens FILE [--listen ADDR] [--tls-cert PEM --tls-key PEM] [--max-bytes N] [--max-concurrent N] [--request-timeout SECONDS] [--lineage-file FILE]"
    )]
    Serve(ServeArgs),
    /// Deliver what senders drop in a landing folder, once each file and its manifest are whole
    #[command(
        after_help = WATCH_EXAMPLES,
        override_usage = "dogana watch DIR --store DB --contracts DIR [--stable-for SECONDS] [--poll SECONDS] [--once]"
    )]
    Watch(WatchArgs),
    /// Turn a TOML contract description into the contract's wire document; read columns from
    /// an ODCS document, a dbt manifest, a live table or a Parquet file
    #[command(
        after_help = CONTRACT_EXAMPLES,
        override_usage = "dogana contract FILE.toml [-o PATH] [--force]\n       dogana contract [FILE.toml] (--odcs FILE --schema NAME | --dbt-manifest FILE --model NAME | --from-table STORE TABLE | --from-parquet FILE) [-o PATH] [--force]"
    )]
    Contract(ContractArgs),
    /// Check an ODCS document's service levels against each table's claims in a store
    #[command(
        after_help = SLA_EXAMPLES,
        override_usage = "dogana sla --store DB --odcs FILE [--at TIME] [--json]"
    )]
    Sla(SlaArgs),
    /// Print a wire document's kind and identity
    #[command(after_help = IDENTITY_EXAMPLES)]
    Identity(IdentityArgs),
    /// Print the RFC 8785 canonical bytes of a JSON document
    #[command(after_help = CANONICAL_EXAMPLES)]
    Canonical(CanonicalArgs),
    /// Print a shell completion script
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
}

#[derive(Debug, Args)]
pub struct ManifestArgs {
    /// The delivered file; it is hashed, never parsed
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The contract: a wire document (JSON) or a TOML description
    #[arg(long, value_name = "PATH")]
    pub contract: PathBuf,
    /// The name of the contract's shape the read has
    #[arg(long, value_name = "NAME")]
    pub shape: String,
    /// The instant of the source the read shows, with a UTC offset
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub produced_at: String,
    /// Live rows in the read
    #[arg(long, value_name = "N", value_parser = count, allow_hyphen_values = true)]
    pub rows: u64,
    /// Tombstones (deleted keys) in the read; tombstone shapes only
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = count, allow_hyphen_values = true)]
    pub tombstones: u64,
    /// The closed window read, typed by the window column; omitted for a rolling shape
    #[arg(long, num_args = 2, value_names = ["LOW", "HIGH"], allow_hyphen_values = true)]
    pub window: Option<Vec<String>>,
    /// Where a read of changes starts: a TIME, a generation token or a sequence position
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    pub since: Option<String>,
    /// The position the read ends at: a generation token, or an integer for sequence tables
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    pub generation: Option<String>,
    /// Replace an existing manifest (atomically)
    #[arg(long)]
    pub force: bool,
    /// Where to write the manifest instead of FILE.json; `-` is standard output
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// An error as one JSON object on standard error (code, kind, message, field, value); the
    /// output itself is unchanged
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The delivered file
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The contract: a wire document (JSON) or a TOML description
    #[arg(long, value_name = "PATH")]
    pub contract: PathBuf,
    /// The manifest [default: FILE.json]
    #[arg(long, value_name = "PATH")]
    pub manifest: Option<PathBuf>,
    /// Print the result as one JSON object on standard output
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ClaimsArgs {
    /// The ledger document (ledger.to_json()); `-` reads standard input. With --store: the TABLE
    /// whose stored ledger to read
    #[arg(value_name = "LEDGER", required_unless_present = "store")]
    pub ledger: Option<PathBuf>,
    /// With --store: more tables, read together as one group (each table's regions, the minima
    /// across the tables and the group's exact instant)
    #[arg(value_name = "TABLE", requires = "store")]
    pub tables: Vec<String>,
    /// Read the ledger of TABLE from this receiver's store instead of a document
    #[arg(long, value_name = "DB")]
    pub store: Option<PathBuf>,
    /// Also print the table's two dates on a line of their own (the minima over its regions)
    #[arg(long)]
    pub dates: bool,
    /// The reader's time, with a UTC offset [default: now]
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub at: Option<String>,
    /// Expire regions proven more than DAYS days before --at (a nonnegative number, may be
    /// fractional) [default: nothing expires]
    #[arg(long, value_name = "DAYS", value_parser = typed::limit_days)]
    pub limit_days: Option<dogana::Duration>,
    /// Cut the regions to this closed window, typed by the window column; for several tables,
    /// `--window TABLE=LOW,HIGH`, once per table
    #[arg(long, num_args = 1..=2, value_names = ["LOW", "HIGH"], allow_hyphen_values = true)]
    pub window: Option<Vec<String>>,
    /// Print the Claims wire document instead of lines
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DeliverArgs {
    /// The delivered file: CSV with a header row, NDJSON or Parquet; with --group one FILE per
    /// table of the group, each with its manifest FILE.json beside it
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// The receiver's store (created if missing): a SQLite file (PATH, PATH.db, sqlite:PATH)
    /// or, in a build with DuckDB, PATH.duckdb or duckdb:PATH
    #[arg(long, value_name = "DB")]
    pub store: PathBuf,
    /// Let the table's first delivery take over a table of that name that dogana did not
    /// create (its rows are then replaced or changed as the plan says)
    #[arg(long)]
    pub adopt: bool,
    /// How long to wait for another writer of the store before refusing
    #[arg(long, value_name = "SECONDS", default_value = "60")]
    pub lock_timeout: String,
    /// With a lake store: fold each table the delivery publishes when 4 of its parts share a
    /// size tier (as dogana fold does); other stores ignore it
    #[arg(long)]
    pub fold: bool,
    /// The contract: a wire document (JSON) or a TOML description
    #[arg(long, value_name = "PATH", required_unless_present = "group")]
    pub contract: Option<PathBuf>,
    /// Deliver the files as one group of tables read together: a TOML file listing the
    /// group's contracts, `contracts = ["invoices.toml", "lines.toml"]` (paths relative to it)
    #[arg(long, value_name = "GROUP.toml", conflicts_with_all = ["contract", "manifest"])]
    pub group: Option<PathBuf>,
    /// The manifest [default: FILE.json]
    #[arg(long, value_name = "PATH")]
    pub manifest: Option<PathBuf>,
    /// The receiver's now, with a UTC offset [default: the clock]
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub at: Option<String>,
    /// Where the delivery came from, recorded in the receipt
    #[arg(long, value_name = "TEXT")]
    pub source: Option<String>,
    /// The file's format [default: from its extension: .csv, .ndjson or .jsonl, .parquet]
    #[arg(long, value_name = "FORMAT", value_enum)]
    pub format: Option<FileFormat>,
    /// The type of a column the contract does not bind (int, float, bool, str, date, datetime
    /// or decimal(p,s)), for the column hash; repeatable. A TOML contract's `columns` give them
    #[arg(long = "column-type", value_name = "NAME=TYPE")]
    pub column_types: Vec<String>,
    /// Print the receipt's wire document instead of lines
    #[arg(long)]
    pub json: bool,
}

/// The formats of a delivered file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FileFormat {
    /// Comma-separated values with a header row
    Csv,
    /// Newline-delimited JSON, one object per line
    Ndjson,
    /// Apache Parquet (a build with the `parquet` feature)
    Parquet,
}

#[derive(Debug, Args)]
pub struct ReceiptsArgs {
    /// The receiver's store: a SQLite file, or PATH.duckdb / duckdb:PATH (read, never changed)
    #[arg(long, value_name = "DB")]
    pub store: PathBuf,
    /// The table
    #[arg(value_name = "TABLE")]
    pub table: String,
    /// Print a JSON array of the receipts' wire documents instead of lines
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The receiver's store: a SQLite file, or PATH.duckdb / duckdb:PATH (read, never changed)
    #[arg(long, value_name = "DB")]
    pub store: PathBuf,
    /// Verify only this table [default: every table of the store]
    #[arg(value_name = "TABLE")]
    pub table: Option<String>,
    /// Print the result as JSON on standard output; an error as one JSON object on standard
    /// error
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct FoldArgs {
    /// The lake store: file:///dir, s3://bucket/prefix, gs://, az://, memory:// or lake:DIR
    #[arg(long, value_name = "URL")]
    pub store: PathBuf,
    /// Fold only this table [default: every table of the store]
    #[arg(value_name = "TABLE")]
    pub table: Option<String>,
    /// How long to wait for another writer's lease on a table before refusing
    #[arg(long, value_name = "SECONDS", default_value = "60")]
    pub lock_timeout: String,
    /// Print the result as JSON on standard output; an error as one JSON object on standard
    /// error
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CollectArgs {
    /// The lake store: file:///dir, s3://bucket/prefix, gs://, az://, memory:// or lake:DIR
    #[arg(long, value_name = "URL")]
    pub store: PathBuf,
    /// Collect only this table [default: every table of the store]
    #[arg(value_name = "TABLE")]
    pub table: Option<String>,
    /// How many of each table's newest snapshots to keep whole, the current one included
    /// (from 1)
    #[arg(long, value_name = "N", default_value = "64")]
    pub retain_generations: String,
    /// How long to wait for another writer's lease on a table before refusing
    #[arg(long, value_name = "SECONDS", default_value = "60")]
    pub lock_timeout: String,
    /// Print the result as JSON on standard output; an error as one JSON object on standard
    /// error
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DuckdbSqlArgs {
    /// The lake store: file:///dir, s3://bucket/prefix, gs://, az://, memory:// or lake:DIR
    #[arg(long, value_name = "URL")]
    pub store: PathBuf,
    /// The table
    #[arg(value_name = "TABLE")]
    pub table: String,
    /// An error as one JSON object on standard error (code, kind, message, field, value); the
    /// output itself is unchanged
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PushArgs {
    /// The local lake store: file:///dir or a directory
    #[arg(long, value_name = "DIR")]
    pub store: PathBuf,
    /// The bucket: s3://bucket/prefix, gs://, az://, or file:///dir
    #[arg(long, value_name = "BUCKET_URL")]
    pub to: String,
    /// The store configuration file whose [sync] section to use [default: DIR/store.toml]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// On a drained store (drain_to in store.toml): clear the marks of publications that
    /// are not on this disk, once their files were delivered again
    #[arg(long)]
    pub forget_lost: bool,
    /// Print the result as JSON on standard output; an error as one JSON object on standard
    /// error
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PullArgs {
    /// The local lake store: file:///dir or a directory (an empty one is made a store)
    #[arg(long, value_name = "DIR")]
    pub store: PathBuf,
    /// The bucket: s3://bucket/prefix, gs://, az://, or file:///dir
    #[arg(long, value_name = "BUCKET_URL")]
    pub from: String,
    /// Leave Parquet parts in the bucket; the first read fetches each
    #[arg(long)]
    pub lazy: bool,
    /// Pull only these tables [default: every table the bucket lists]
    #[arg(long, value_name = "TABLE", num_args = 1..)]
    pub tables: Vec<String>,
    /// Replace this table's local head, off the bucket's chain, by the bucket's; its local
    /// objects are moved under DIR/.sync/fenced/, not deleted
    #[arg(long, value_name = "TABLE")]
    pub adopt: Vec<String>,
    /// The store configuration file whose [sync] section to use [default: DIR/store.toml]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print the result as JSON on standard output; an error as one JSON object on standard
    /// error
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReplicateArgs {
    /// The canonical lake store (read, never changed): file:///dir, s3://, gs://, az://
    #[arg(long, value_name = "URL")]
    pub from: PathBuf,
    /// The replica: a local directory, created on the first pull
    #[arg(long, value_name = "DIR")]
    pub to: PathBuf,
    /// Pull only these tables [default: every table of the store]
    #[arg(value_name = "TABLE")]
    pub tables: Vec<String>,
    /// Replace a local pointer naming a snapshot off the store's chain
    #[arg(long)]
    pub adopt: bool,
    /// Print the result as JSON on standard output; an error as one JSON object on standard
    /// error
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LedgerArgs {
    /// The receiver's store
    #[arg(long, value_name = "DB")]
    pub store: PathBuf,
    /// The table
    #[arg(value_name = "TABLE")]
    pub table: String,
    /// An error as one JSON object on standard error (code, kind, message, field, value); the
    /// output itself is unchanged
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The receiver's store
    #[arg(long, value_name = "DB")]
    pub store: PathBuf,
    /// The table (with --together: every table of the group)
    #[arg(value_name = "TABLE", required = true, num_args = 1..)]
    pub tables: Vec<String>,
    /// The completeness date the reader needs [default: --at]
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub complete_as_of: Option<String>,
    /// The deletions date the reader needs [default: none]
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub deletions_as_of: Option<String>,
    /// Only this closed window of the table, typed by its window column
    #[arg(long, num_args = 2, value_names = ["LOW", "HIGH"], allow_hyphen_values = true)]
    pub window: Option<Vec<String>>,
    /// The planner's now (with --together: the earliest admissible instant) [default: the clock]
    #[arg(long, value_name = "NOW", allow_hyphen_values = true)]
    pub at: Option<String>,
    /// Plan one read per table at one shared instant, so the group becomes exact there
    #[arg(long)]
    pub together: bool,
    /// Print the Requirement and the Extraction wire documents
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct NextArgs {
    /// The receiver's store
    #[arg(long, value_name = "DB")]
    pub store: PathBuf,
    /// The table
    #[arg(value_name = "TABLE")]
    pub table: String,
    /// The contract's shape to read through
    #[arg(long, value_name = "NAME")]
    pub shape: String,
    /// The boundary the extractor reads at
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub until: String,
    /// The window to read, for a window shape without a size
    #[arg(long, num_args = 2, value_names = ["LOW", "HIGH"], allow_hyphen_values = true)]
    pub window: Option<Vec<String>>,
    /// Print the Extraction wire document
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The tables to show, with --store; several share one time axis
    #[arg(value_name = "TABLE", requires = "store")]
    pub tables: Vec<String>,
    /// The receiver's store (any backend `--store` names; read, never changed)
    #[arg(long, value_name = "DB", conflicts_with_all = ["ledger", "receipts"], required_unless_present = "ledger")]
    pub store: Option<PathBuf>,
    /// A ledger document (ledger.to_json()), instead of a store
    #[arg(long, value_name = "LEDGER", requires = "receipts")]
    pub ledger: Option<PathBuf>,
    /// The ledger's receipts as dogana receipts --json exports them (a JSON array)
    #[arg(long, value_name = "RECEIPTS", requires = "ledger")]
    pub receipts: Option<PathBuf>,
    /// The reader's time the states are taken at, with a UTC offset [default: now]
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub at: Option<String>,
    /// Expire regions proven more than DAYS days before --at [default: nothing expires]
    #[arg(long, value_name = "DAYS", value_parser = typed::limit_days)]
    pub limit_days: Option<dogana::Duration>,
    /// The HTML file to write
    #[arg(short, long, value_name = "FILE.html")]
    pub output: PathBuf,
    /// Replace an existing file (atomically)
    #[arg(long)]
    pub force: bool,
    /// An error as one JSON object on standard error (code, kind, message, field, value); the
    /// output itself is unchanged
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ContractArgs {
    /// The TOML description (a JSON contract is normalized as well); without it, the columns
    /// an option below names and their schema_hash are printed
    #[arg(value_name = "FILE", required_unless_present_any = ["odcs", "dbt_manifest", "from_table", "from_parquet"])]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub columns: ColumnsFromArgs,
    /// Write the wire document to PATH instead of standard output
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Replace an existing output file (atomically)
    #[arg(long)]
    pub force: bool,
    /// An error as one JSON object on standard error (code, kind, message, field, value); the
    /// output itself is unchanged
    #[arg(long)]
    pub json: bool,
}

/// Where a contract's columns are read from (docs/contract-toml.md, "Columns from where they
/// are defined"); at most one.
#[derive(Debug, Args)]
pub struct ColumnsFromArgs {
    /// An ODCS v3 document (YAML, or JSON for a name ending .json): the properties of the
    /// schema object --schema names
    #[arg(long, value_name = "FILE", requires = "schema", group = "source")]
    pub odcs: Option<PathBuf>,
    /// The ODCS schema object (its name or physicalName)
    #[arg(long, value_name = "NAME", requires = "odcs")]
    pub schema: Option<String>,
    /// A dbt project's target/manifest.json: the columns and data_type of the model --model
    /// names
    #[arg(long, value_name = "FILE", requires = "model", group = "source")]
    pub dbt_manifest: Option<PathBuf>,
    /// The dbt model (its name, or its unique id model.PACKAGE.NAME)
    #[arg(long, value_name = "NAME", requires = "dbt_manifest")]
    pub model: Option<String>,
    /// A live table: a database as --store names one (SQLite, DuckDB, Postgres) and the table,
    /// read through its catalog
    #[arg(long, num_args = 2, value_names = ["STORE", "TABLE"], group = "source")]
    pub from_table: Option<Vec<String>>,
    /// A Parquet file's schema (a build with the parquet feature)
    #[arg(long, value_name = "FILE", group = "source")]
    pub from_parquet: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SlaArgs {
    /// The receiver's store (read, never changed)
    #[arg(long, value_name = "DB")]
    pub store: PathBuf,
    /// The ODCS v3 document whose slaProperties to check, for each schema object (its
    /// physicalName, else its name, is the store's table)
    #[arg(long, value_name = "FILE")]
    pub odcs: PathBuf,
    /// The reader's time, with a UTC offset [default: now]
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub at: Option<String>,
    /// Print one JSON object on standard output (and an error as one JSON object on standard
    /// error)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct IdentityArgs {
    /// A wire document of any kind; `-` reads standard input
    #[arg(value_name = "DOC")]
    pub doc: PathBuf,
    /// Print the result as JSON on standard output; an error as one JSON object on standard
    /// error
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CanonicalArgs {
    /// A JSON document; `-` reads standard input
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// An error as one JSON object on standard error (code, kind, message, field, value); the
    /// output itself is unchanged
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
    /// An error as one JSON object on standard error (code, kind, message, field, value); the
    /// output itself is unchanged
    #[arg(long)]
    pub json: bool,
}

/// A count of rows (`--rows`, `--tombstones`): a nonnegative integer. A negative one is named
/// as such (clap's own words would be "unexpected argument" or "invalid digit").
fn count(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) => Ok(n),
        Err(_)
            if text
                .strip_prefix('-')
                .is_some_and(|d| d.parse::<u64>().is_ok()) =>
        {
            Err("the count must be nonnegative: a read holds 0 rows or more (CLI-07)".to_owned())
        }
        Err(_) => Err("not a count: write a nonnegative integer, such as 1000".to_owned()),
    }
}

/// Exits with a usage error (status 2) of `subcommand`, its usage and a pointer to `--help`: for
/// a call the grammar accepts but the command cannot take, such as `dogana claims --store DB`
/// without its TABLE.
pub fn usage_error(subcommand: &str, message: impl std::fmt::Display) -> ! {
    let mut command = <Cli as clap::CommandFactory>::command();
    command.build();
    let sub = command
        .find_subcommand_mut(subcommand)
        .expect("a subcommand of the grammar");
    sub.error(clap::error::ErrorKind::MissingRequiredArgument, message)
        .exit()
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn grammar_is_consistent() {
        super::Cli::command().debug_assert();
    }
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The receiver's store (created by the first delivery): a SQLite file, PATH.duckdb,
    /// postgres://…, or a lake URL, as the build has them
    #[arg(long, value_name = "DB")]
    pub store: PathBuf,
    /// The folder of contracts: TABLE.toml or TABLE.json for each table senders may deliver
    #[arg(long, value_name = "DIR")]
    pub contracts: PathBuf,
    /// The tokens file: one [[sender]] per sender (name, token_sha256, deliver, read)
    #[arg(long, value_name = "FILE")]
    pub tokens: PathBuf,
    /// Where to listen (port 0: the system picks one; the first line printed says which)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8630")]
    pub listen: std::net::SocketAddr,
    /// Plain HTTP on an address other than loopback (behind a proxy that terminates TLS)
    #[arg(long)]
    pub insecure_listen: bool,
    /// TLS: the certificate chain, PEM
    #[arg(long, value_name = "PEM")]
    pub tls_cert: Option<PathBuf>,
    /// TLS: the private key, PEM
    #[arg(long, value_name = "PEM")]
    pub tls_key: Option<PathBuf>,
    /// The largest delivered file taken, in bytes (larger: 413)
    #[arg(long, value_name = "BYTES", default_value_t = 10 * 1024 * 1024 * 1024)]
    pub max_bytes: u64,
    /// Deliveries to one table decided at once (the others queue; other tables proceed in
    /// parallel). Above 1, deliveries to one table stage their rows in parallel, but all but
    /// one are decided again at commit, the head having moved (bench/serve.md)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub max_concurrent: usize,
    /// How long a request may send nothing: its headers, or between chunks of its body
    #[arg(long, value_name = "SECONDS", default_value = "60")]
    pub request_timeout: String,
    /// How long a delivery waits for the store's write lock
    #[arg(long, value_name = "SECONDS", default_value = "600")]
    pub lock_timeout: String,
    /// Where uploads are staged [default: dogana-serve-staging in the system's temporary folder]
    #[arg(long, value_name = "DIR")]
    pub staging: Option<PathBuf>,
    /// Append an OpenLineage run event (JSON line) per decided delivery to this file
    #[arg(long, value_name = "FILE")]
    pub lineage_file: Option<PathBuf>,
    /// Post an OpenLineage run event per decided delivery to this URL (http or https; for
    /// Marquez, http://HOST:5000/api/v1/lineage)
    #[arg(long, value_name = "URL")]
    pub lineage_url: Option<String>,
    /// An error before the service starts as one JSON object on standard error (logs are
    /// JSON lines always)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The landing folder
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The receiver's store (created by the first delivery)
    #[arg(long, value_name = "DB")]
    pub store: PathBuf,
    /// The folder of contracts: TABLE.toml or TABLE.json for each table
    #[arg(long, value_name = "DIR")]
    pub contracts: PathBuf,
    /// How long a file and its manifest must stay unchanged before they are delivered
    #[arg(long, value_name = "SECONDS", default_value = "2")]
    pub stable_for: String,
    /// How often the folder is read
    #[arg(long, value_name = "SECONDS", default_value = "1")]
    pub poll: String,
    /// How long a delivery waits for the store's write lock
    #[arg(long, value_name = "SECONDS", default_value = "600")]
    pub lock_timeout: String,
    /// The receipts' source
    #[arg(long, value_name = "TEXT", default_value = "watch")]
    pub source: String,
    /// Deliver what is ready (after one --stable-for wait), print what was done, and exit
    #[arg(long)]
    pub once: bool,
    /// With --once, what was done as one JSON object; an error as one JSON object on standard
    /// error
    #[arg(long)]
    pub json: bool,
}
