//! `dogana identity DOC`: the kind and identity of a wire document, `<Kind> <sha256>`, read
//! strictly through the kind's own decoder (every kind `FromWire` reads), so that a document
//! dogana would refuse has no identity here either. A TOML contract description is read too.

use dogana::{
    Action, ApplyPlan, Check, Claims, Contract, Extraction, FromWire, Ledger, Manifest, Receipt,
    Region, RegionClaim, Requirement, Shape, Transition, Wire,
};
use serde_json::Value;

use crate::cli::IdentityArgs;
use crate::input::{self, shown};
use dogana_codes as codes;

use crate::output;
use crate::refusal::{refuse, Result};

/// `<Kind> <identity>` of a document whose `kind` is one of `$t`.
macro_rules! dispatch {
    ($kind:expr, $value:expr, $name:expr, [$($t:ty),*]) => {
        match $kind {
            $(<$t as Wire>::KIND => match <$t as FromWire>::from_value($value) {
                Ok(v) => Ok(format!("{} {}\n", <$t as Wire>::KIND, v.identity())),
                Err(e) => refuse!(codes::DOCUMENT_INVALID, "{} is not a valid {}: {}; fix the document",
                    $name, <$t as Wire>::KIND, e.0
                ),
            },)*
            other => refuse!(codes::DOCUMENT_INVALID, "{} has kind {}, which dogana cannot read; the kinds are {}",
                $name,
                dogana::quoted(other, dogana::SHOWN),
                [$(<$t as Wire>::KIND),*].join(", ")
            ),
        }
    };
}

pub fn run(args: IdentityArgs) -> Result<()> {
    let name = shown(&args.doc);
    if !input::is_dash(&args.doc) && args.doc.extension().is_some_and(|e| e == "toml") {
        let contract = input::contract(&args.doc)?;
        return print(&format!("Contract {}\n", contract.identity()), args.json);
    }
    let value = input::json(&args.doc, "document")?;
    let kind = match value.get("kind") {
        Some(Value::String(k)) => k.as_str(),
        Some(_) => refuse!(codes::DOCUMENT_INVALID, "{name}: \"kind\" is not a string; a wire document names its kind, as in \"kind\": \"Manifest\""),
        None => refuse!(codes::DOCUMENT_INVALID, "{name} has no \"kind\", so it is not a dogana wire document; a wire document names its kind, as in \"kind\": \"Manifest\""),
    };
    let line = dispatch!(
        kind,
        &value,
        name,
        [
            Contract,
            Shape,
            Manifest,
            Ledger,
            Region,
            Receipt,
            Check,
            Transition,
            ApplyPlan,
            Action,
            Claims,
            RegionClaim,
            Requirement,
            Extraction
        ]
    )?;
    print(&line, args.json)
}

/// The `<Kind> <identity>` line, or with `json` the object `{"kind": …, "identity": …}`.
fn print(line: &str, json: bool) -> Result<()> {
    if !json {
        return output::stdout(line.as_bytes());
    }
    let (kind, identity) = line.trim_end().split_once(' ').unwrap_or((line, ""));
    let doc = serde_json::json!({ "kind": kind, "identity": identity });
    output::json(&format!("{doc}\n"))
}
