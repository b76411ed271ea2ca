//! The lake store's own failures, each named as the store's design record names it. Every one
//! reaches the engine as [`StoreError::Backend`] with backend `lake` and a [`LakeError`]
//! source (downcast it to match), and every one is raised before anything is published.

use std::error::Error;
use std::fmt;

use dogana_receiver::StoreError;

/// What the lake store refused, or what its object store failed to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum LakeError {
    /// `store-id` does not hold one canonical version-4 UUID (`store.init.identity-invalid`).
    StoreIdentityInvalid {
        /// The store-id object.
        path: String,
        /// What it holds (at most 80 characters of it).
        found: String,
    },
    /// An unexpired lease on the table is held by another writer (`store.lease.held`).
    LeaseHeld {
        /// The table.
        table: String,
        /// Who holds it.
        holder: String,
        /// When it expires, by the storage's clock (RFC 3339).
        expires: String,
    },
    /// A conditional write under a lease lost its condition to a higher fence: another writer
    /// took the lease (`store.lease.stale-fence`). Nothing this writer wrote is reachable.
    LeaseFenced {
        /// The table.
        table: String,
        /// This writer's fence.
        fence: u64,
        /// The fence the pointer now carries.
        current: u64,
    },
    /// A release of a lease another holder holds, or that a later acquisition fenced past
    /// (`store.lease.not-held`). The pointer is untouched.
    LeaseNotHeld {
        /// The table.
        table: String,
        /// Who holds it now (`nobody` when released).
        holder: String,
    },
    /// The probe could not demonstrate conditional create and replace: a transport error, an
    /// unsupported method or a forbidden response (`store.probe.inconclusive`).
    SyncProbeInconclusive {
        /// The store root.
        root: String,
        /// The probe step that failed.
        step: &'static str,
        /// The storage's answer.
        reason: String,
    },
    /// The storage accepted a conditional write it should have refused: its conditional writes
    /// are not real, so the store refuses to write (`weak-conditional-backend`,
    /// `topology.coordinate.weak-backend`).
    WeakConditionalBackend {
        /// The store root.
        root: String,
        /// Which condition was ignored.
        ignored: &'static str,
    },
    /// A manifest of a newer format major than this build reads (`store.lay-out.format-newer`).
    StoreManifestFormatNewer {
        /// The manifest.
        file: String,
        /// Its format_version.
        found: String,
        /// The newest version this build reads.
        supported: String,
    },
    /// A key column's arriving type would widen it (Int64 with Float64): a key takes no
    /// promotion (`store.reconcile.key-widening`). Raised before any Parquet is written, and
    /// by a fold meeting a key already stored as Float64.
    StoreKeyWidened {
        /// The table.
        table: String,
        /// The key column.
        column: String,
        /// Its stored type.
        stored: String,
        /// The arriving type.
        arriving: String,
    },
    /// A column's arriving type does not join its stored type in the schema lattice
    /// (`store.reconcile.incompatible`, `store.reconcile.nested-lattice`). Raised before any
    /// Parquet is written.
    StoreSchemaIncompatible {
        /// The table.
        table: String,
        /// The column path (`a.b` a struct field, `a[]` a list's items, `a{}` a map's values).
        column: String,
        /// The stored type (at most 80 characters of it).
        stored: String,
        /// The arriving type (at most 80 characters of it).
        arriving: String,
    },
    /// A setting outside what it allows, refused at its parse before anything is written or
    /// deleted.
    ConfigInvalid {
        /// The setting.
        field: &'static str,
        /// Its value (at most 80 characters of it).
        value: String,
        /// The rule it breaks.
        rule: &'static str,
        /// What it allows.
        reason: &'static str,
    },
    /// A read of a snapshot a collection reclaimed: its manifest is kept, this part was
    /// deleted (`store.collect.manifest-kept`, the record's `part-collected`).
    PartCollected {
        /// The snapshot.
        snapshot: String,
        /// The part.
        part: String,
    },
    /// A store opened for writing is a replica: write to its canonical store
    /// (`store.replicate.write-refused`).
    ReplicaWriteRefused {
        /// The replica.
        replica: String,
        /// The canonical store its `replica.json` names.
        canonical: String,
    },
    /// A pull into a replica of another store: its `store-id` is not the canonical store's.
    /// Nothing was written.
    ReplicaStoreMismatch {
        /// The replica.
        replica: String,
        /// Its store-id (at most 80 characters).
        found: String,
        /// The store pulled from.
        canonical: String,
        /// That store's id.
        expected: String,
    },
    /// A pull into a directory holding a lake store (or other files) that is not a replica.
    /// Nothing was written.
    ReplicaTargetIsAStore {
        /// The directory.
        target: String,
    },
    /// A snapshot whose Parquet part is not on the replica's disk (nor to be had from the
    /// canonical store): the snapshot is left unpublished there
    /// (`store.replicate.partial-parquet`).
    ReplicaPartialParquet {
        /// The table.
        table: String,
        /// The snapshot.
        snapshot: String,
        /// The part missing.
        part: String,
    },
    /// A replica's pointer names a snapshot the canonical pointer's chain does not: a pull
    /// advances only along that chain, or replaces it when told to adopt
    /// (`store.pull.pointer-advance`). No pointer was written.
    ReplicaPointerDiverged {
        /// The table.
        table: String,
        /// The snapshot the replica's pointer names.
        local: String,
        /// The canonical head.
        canonical: String,
    },
    /// A push or pull between a local store and a bucket of another store: their `store-id`s
    /// differ, or the local directory holds something that is not a lake store
    /// (`store.init.*`). Nothing was written.
    SyncStoreMismatch {
        /// The local store.
        local: String,
        /// Its store-id (at most 80 characters; `none` when it has none).
        local_id: String,
        /// The bucket.
        bucket: String,
        /// Its store-id (at most 80 characters).
        bucket_id: String,
    },
    /// The bucket manifest (or a generation manifest) does not parse, or is of a newer format
    /// than this build reads (`store.push.manifest-format`). Nothing was written or deleted.
    SyncManifestInvalid {
        /// The object.
        key: String,
        /// Why (at most 200 characters).
        reason: String,
    },
    /// An object whose bytes do not hash to the digest the bucket manifest lists
    /// (the record's `digest-mismatch`): it is not written locally, and no pointer naming it
    /// moves.
    SyncDigestMismatch {
        /// The object.
        key: String,
        /// The SHA-256 the manifest lists.
        expected: String,
        /// The SHA-256 of the bytes read.
        found: String,
    },
    /// A key the local store and the bucket both hold with different bytes, inside a table's
    /// published history: immutable keys never differ, so one side is damaged. Nothing was
    /// written for the table.
    SyncKeyConflict {
        /// The object.
        key: String,
        /// Its local SHA-256.
        local: String,
        /// The SHA-256 the bucket manifest lists.
        remote: String,
    },
    /// A push's manifest commit lost its condition `push_retries` times in a row without a
    /// newer generation, or 64 times in all (`store.merge.exhausted`). Every object it
    /// uploaded is in the bucket, unlisted; run the push again.
    SyncManifestRebaseExhausted {
        /// The rounds it tried.
        rounds: u32,
        /// Every object it uploaded.
        uploaded: Vec<String>,
    },
    /// A pull whose bucket pointers name objects the bucket manifest does not list yet, after
    /// re-reading it: a push is between its pointer and its manifest. The objects verified
    /// are kept, so the next pull downloads only what still differs
    /// (`store.pull.unconverged-resume`); no pointer was written.
    SyncPullUnconverged {
        /// The tables whose heads are not all listed.
        tables: Vec<String>,
        /// An object one of them names that is not listed.
        missing: String,
    },
    /// A part of a lazily pulled store that could not be fetched within the deadline
    /// (`read.cache.miss-wait`).
    ReadPartUnavailable {
        /// The part.
        part: String,
        /// The last failure.
        reason: String,
    },
    /// A store listing objects a lazy pull left in the bucket, opened with no bucket to fetch
    /// them from (`store.pull.folded-runs-unreachable`).
    SyncFoldedRunsUnfetched {
        /// The table.
        table: String,
        /// The object.
        key: String,
    },
    /// A drained store's unpushed publications could not be pushed: the command stops before
    /// its first read (`store.drain.before-read`).
    DrainUnpushed {
        /// The drain bucket.
        bucket: String,
        /// The publications (table and snapshot).
        deliveries: Vec<String>,
        /// Why the push failed.
        reason: String,
    },
    /// A drained store's node has unpushed publications that are not on this disk: the disk
    /// that held them is gone, and so are their receipts. The command stops until they are
    /// sent again and `dogana push --forget-lost` clears them.
    DrainLost {
        /// The drain bucket.
        bucket: String,
        /// The publications (table and snapshot).
        deliveries: Vec<String>,
    },
    /// A fold of a lazy store whose input parts exceed the part cache
    /// (`store.fold.cached-inputs`). Nothing was published.
    FoldInputsExceedCache {
        /// The table.
        table: String,
        /// The bytes of its input parts.
        inputs: u64,
        /// `part_cache_bytes`.
        cache: u64,
    },
    /// The object store refused the credentials this process holds (HTTP 401 or 403): wrong,
    /// expired or without the permission the operation needs. Nothing was written by the
    /// refused request; retrying with the same credentials will not help.
    CredentialsRefused {
        /// The object's path in the bucket.
        path: String,
        /// The store's answer, cut to 300 characters.
        detail: String,
    },
    /// The store root is not a URL this build opens.
    Root(String),
    /// The object store failed.
    Object(object_store::Error),
    /// A local filesystem operation (the pointer's version-checked rename) failed.
    Io(std::io::Error),
}

impl fmt::Display for LakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LakeError::StoreIdentityInvalid { path, found } => write!(
                f,
                "StoreIdentityInvalid: {path} holds {found:?}, not one canonical version-4 UUID"
            ),
            LakeError::LeaseHeld {
                table,
                holder,
                expires,
            } => write!(
                f,
                "LeaseHeld: table {table:?} is leased by {holder} until {expires}; try again then"
            ),
            LakeError::LeaseFenced {
                table,
                fence,
                current,
            } => write!(
                f,
                "LeaseFenced: table {table:?}: this writer's fence {fence} lost to fence {current}; nothing it wrote is published"
            ),
            LakeError::LeaseNotHeld { table, holder } => write!(
                f,
                "LeaseNotHeld: the lease of table {table:?} is not this writer's (held by {holder})"
            ),
            LakeError::SyncProbeInconclusive { root, step, reason } => write!(
                f,
                "SyncProbeInconclusive: {root}: the probe's {step} did not answer ({reason}); conditional writes are not demonstrated, so the store is not opened for writing"
            ),
            LakeError::WeakConditionalBackend { root, ignored } => write!(
                f,
                "weak-conditional-backend: {root} ignored {ignored}; a store without real conditional writes is refused for writing"
            ),
            LakeError::StoreManifestFormatNewer {
                file,
                found,
                supported,
            } => write!(
                f,
                "StoreManifestFormatNewer: {file} has format_version {found}; this build reads up to {supported}: read it with a newer build"
            ),
            LakeError::StoreKeyWidened {
                table,
                column,
                stored,
                arriving,
            } => write!(
                f,
                "StoreKeyWidened: table {table:?}: key column {column:?} is stored as {stored} and arrives as {arriving}; a key never widens (store.reconcile.key-widening), nothing was written"
            ),
            LakeError::StoreSchemaIncompatible {
                table,
                column,
                stored,
                arriving,
            } => write!(
                f,
                "StoreSchemaIncompatible: table {table:?}: column {column:?} is stored as {stored} and arrives as {arriving}, which the schema lattice does not join (store.reconcile.incompatible); nothing was written"
            ),
            LakeError::ConfigInvalid {
                field,
                value,
                rule,
                reason,
            } => write!(
                f,
                "{field} = {value:?} is refused ({rule}): {reason}; nothing was written or deleted"
            ),
            LakeError::PartCollected { snapshot, part } => write!(
                f,
                "part-collected: snapshot {snapshot} was reclaimed by a collection and its part {part} deleted; read a retained snapshot (the current one, or one of the newest retain_generations)"
            ),
            LakeError::ReplicaWriteRefused { replica, canonical } => write!(
                f,
                "ReplicaWriteRefused: {replica} is a read-only replica of {canonical}; write to the canonical store, then dogana replicate again"
            ),
            LakeError::ReplicaStoreMismatch {
                replica,
                found,
                canonical,
                expected,
            } => write!(
                f,
                "ReplicaStoreMismatch: {replica} replicates store {found:?}, and {canonical} is store {expected:?}; replicate into a new directory"
            ),
            LakeError::ReplicaTargetIsAStore { target } => write!(
                f,
                "{target} is not empty and not a replica (it has no replica.json); replicate into a new directory or an existing replica"
            ),
            LakeError::ReplicaPartialParquet {
                table,
                snapshot,
                part,
            } => write!(
                f,
                "ReplicaPartialParquet: table {table:?}: part {part} of snapshot {snapshot} is not on the replica's disk; the snapshot stays unpublished there"
            ),
            LakeError::ReplicaPointerDiverged {
                table,
                local,
                canonical,
            } => write!(
                f,
                "table {table:?}: the replica's pointer names {local}, which the canonical pointer's chain (head {canonical}) does not; pull with --adopt to replace it (store.pull.pointer-advance)"
            ),
            LakeError::SyncStoreMismatch {
                local,
                local_id,
                bucket,
                bucket_id,
            } => write!(
                f,
                "SyncStoreMismatch: the local store {local} (store-id {local_id}) and the bucket {bucket} (store-id {bucket_id}) are not one store (store.init.identity); push to or pull from the bucket of this store, or pull into an empty directory; nothing was written"
            ),
            LakeError::SyncManifestInvalid { key, reason } => write!(
                f,
                "SyncManifestInvalid: {key}: {reason}; nothing was written or deleted"
            ),
            LakeError::SyncDigestMismatch {
                key,
                expected,
                found,
            } => write!(
                f,
                "digest-mismatch: {key} hashes to {found}, the bucket manifest lists {expected}; it was not written, and no pointer naming it moved"
            ),
            LakeError::SyncKeyConflict { key, local, remote } => write!(
                f,
                "SyncKeyConflict: {key} is {local} here and {remote} in the bucket manifest; immutable objects never differ, so one copy is damaged; nothing of its table was written"
            ),
            LakeError::SyncManifestRebaseExhausted { rounds, uploaded } => write!(
                f,
                "SyncManifestRebaseExhausted: the bucket manifest moved under {rounds} commit rounds (store.merge.exhausted); these {} objects are in the bucket but not listed: {}; run the push again",
                uploaded.len(),
                uploaded.join(", ")
            ),
            LakeError::SyncPullUnconverged { tables, missing } => write!(
                f,
                "SyncPullUnconverged: the bucket pointers of {} name objects its manifest does not list yet (e.g. {missing}): a push is between its pointer and its manifest; the objects verified are kept, no pointer was written; run the pull again",
                tables.join(", ")
            ),
            LakeError::ReadPartUnavailable { part, reason } => write!(
                f,
                "ReadPartUnavailable: part {part} could not be fetched within 30 s (read.cache.miss-wait): {reason}"
            ),
            LakeError::DrainUnpushed {
                bucket,
                deliveries,
                reason,
            } => write!(
                f,
                "DrainUnpushed: {} publications of this node are not in {bucket} yet ({}), and pushing them failed: {reason}; the command stopped before reading anything (store.drain.before-read); run it again once the bucket is reachable",
                deliveries.len(),
                deliveries.join(", ")
            ),
            LakeError::DrainLost { bucket, deliveries } => write!(
                f,
                "DrainLost: {} publications of this node were marked unpushed in {bucket} and are not on this disk ({}): the disk that held them is gone, and their receipts with it; deliver those files again, then run dogana push --forget-lost",
                deliveries.len(),
                deliveries.join(", ")
            ),
            LakeError::SyncFoldedRunsUnfetched { table, key } => write!(
                f,
                "SyncFoldedRunsUnfetched: table {table}: {key} was left in the bucket by a lazy pull and this store names no bucket to fetch it from (.sync/source.json); pull again"
            ),
            LakeError::FoldInputsExceedCache {
                table,
                inputs,
                cache,
            } => write!(
                f,
                "FoldInputsExceedCache: {table}: the parts a fold (or a reader of their files) needs at once are {inputs} bytes, and the part cache holds {cache} (part_cache_bytes; store.fold.cached-inputs); raise part_cache_bytes in store.toml; nothing was published"
            ),
            LakeError::CredentialsRefused { path, detail } => write!(
                f,
                "CredentialsRefused: the object store refused this process's credentials for {path}: set the ones the bucket expects (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AZURE_STORAGE_ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY, GOOGLE_APPLICATION_CREDENTIALS) and run again ({detail})"
            ),
            LakeError::Root(m) => write!(f, "store root: {m}"),
            LakeError::Object(e) => write!(f, "object store: {e}"),
            LakeError::Io(e) => write!(f, "filesystem: {e}"),
        }
    }
}

impl Error for LakeError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            LakeError::Object(e) => Some(e),
            LakeError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<object_store::Error> for LakeError {
    fn from(e: object_store::Error) -> Self {
        match e {
            object_store::Error::Unauthenticated { path, source }
            | object_store::Error::PermissionDenied { path, source } => {
                LakeError::CredentialsRefused {
                    path,
                    detail: source.to_string().chars().take(300).collect(),
                }
            }
            e => LakeError::Object(e),
        }
    }
}

impl From<std::io::Error> for LakeError {
    fn from(e: std::io::Error) -> Self {
        LakeError::Io(e)
    }
}

impl From<LakeError> for StoreError {
    fn from(e: LakeError) -> Self {
        StoreError::backend("lake", e)
    }
}

impl LakeError {
    /// The lake error inside a [`StoreError`], if it is one.
    pub fn of(e: &StoreError) -> Option<&LakeError> {
        match e {
            StoreError::Backend { source, .. } | StoreError::Transient { source, .. } => {
                source.downcast_ref::<LakeError>()
            }
            _ => None,
        }
    }

    /// Its stable code (`docs/errors.md`): a lease another writer holds is transient, as is
    /// an object store that did not answer; everything else is a refusal.
    pub fn code(&self) -> dogana_codes::Code {
        use dogana_codes as codes;
        match self {
            LakeError::LeaseHeld { .. }
            | LakeError::LeaseFenced { .. }
            | LakeError::LeaseNotHeld { .. } => codes::STORE_LOCKED,
            LakeError::StoreIdentityInvalid { .. } => codes::STORE_INCONSISTENT,
            LakeError::SyncProbeInconclusive { .. } | LakeError::WeakConditionalBackend { .. } => {
                codes::COORDINATION_UNPROVEN
            }
            LakeError::StoreManifestFormatNewer { .. } => codes::FORMAT_NEWER,
            LakeError::StoreKeyWidened { .. } | LakeError::StoreSchemaIncompatible { .. } => {
                codes::SCHEMA_INCOMPATIBLE
            }
            LakeError::ConfigInvalid { .. } => codes::CONFIG_INVALID,
            LakeError::PartCollected { .. } => codes::PART_COLLECTED,
            LakeError::ReplicaWriteRefused { .. } => codes::REPLICA_WRITE_REFUSED,
            LakeError::ReplicaStoreMismatch { .. }
            | LakeError::ReplicaTargetIsAStore { .. }
            | LakeError::ReplicaPartialParquet { .. }
            | LakeError::ReplicaPointerDiverged { .. } => codes::REPLICA_REFUSED,
            LakeError::SyncStoreMismatch { .. }
            | LakeError::SyncManifestInvalid { .. }
            | LakeError::SyncDigestMismatch { .. }
            | LakeError::SyncKeyConflict { .. }
            | LakeError::SyncFoldedRunsUnfetched { .. }
            | LakeError::DrainLost { .. }
            | LakeError::FoldInputsExceedCache { .. } => codes::SYNC_REFUSED,
            LakeError::SyncManifestRebaseExhausted { .. }
            | LakeError::SyncPullUnconverged { .. }
            | LakeError::DrainUnpushed { .. } => codes::SYNC_CONTENDED,
            LakeError::ReadPartUnavailable { .. } => codes::PART_UNAVAILABLE,
            LakeError::CredentialsRefused { .. } => codes::CREDENTIALS_REFUSED,
            LakeError::Root(_) => codes::STORE_SPEC_INVALID,
            LakeError::Object(_) | LakeError::Io(_) => {
                dogana_receiver::transient_io(self).unwrap_or(codes::STORE_FAILED)
            }
        }
    }
}
