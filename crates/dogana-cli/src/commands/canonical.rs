//! `dogana canonical FILE`: the RFC 8785 (JCS) bytes of any JSON document, with no trailing
//! newline, so that `dogana canonical doc.json | sha256sum` hashes exactly those bytes.

use crate::cli::CanonicalArgs;
use crate::input::{self, shown};
use crate::output;
use crate::refusal::{refuse, Result};
use dogana_codes as codes;

pub fn run(args: CanonicalArgs) -> Result<()> {
    let value = input::json(&args.file, "document")?;
    match dogana_json::jcs_checked(&value) {
        Ok(bytes) => output::stdout(&bytes),
        Err(e) => refuse!(codes::DOCUMENT_INVALID, "document {} cannot be canonicalized without rounding: {e}; write integers beyond 2^53 as strings",
            shown(&args.file)
        ),
    }
}
