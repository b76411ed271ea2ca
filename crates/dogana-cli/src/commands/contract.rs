//! `dogana contract FILE.toml [-o PATH]`: the contract's full wire document from its TOML
//! description (docs/contract-toml.md).
//!
//! Without `-o`, standard output gets the document and nothing else, so it can be piped. With
//! `-o PATH`, the document is written to PATH (atomically; an existing file only with `--force`)
//! and standard output gets `wrote PATH (Contract <identity>)` and `schema_hash <hash>` (or
//! `schema_hash none`, and the hashed column list when `columns` computed it).

use crate::cli::ContractArgs;
use crate::input::{self, shown};
use crate::output;
use crate::refusal::{refuse, Result};
use crate::toml_contract;
use dogana::Wire;
use dogana_codes as codes;

pub fn run(args: ContractArgs) -> Result<()> {
    let bytes = input::read(&args.file, "contract")?;
    let (contract, columns) = if input::is_toml(&args.file, &bytes) {
        let Ok(text) = std::str::from_utf8(&bytes) else {
            refuse!(
                codes::CONTRACT_INVALID,
                "contract {} is not UTF-8 text",
                shown(&args.file)
            )
        };
        let parsed = toml_contract::parse(text, &shown(&args.file))?;
        (parsed.contract, parsed.hashed_columns)
    } else {
        (input::contract(&args.file)?, None)
    };
    let document = format!("{}\n", contract.to_json());
    match &args.output {
        None => output::json(&document),
        Some(path) if input::is_dash(path) => output::json(&document),
        Some(path) => {
            output::check_free(path, args.force, "contract")?;
            output::file(path, document.as_bytes(), args.force, "contract")?;
            let mut report = format!("wrote {} (Contract {})\n", shown(path), contract.identity());
            match contract.schema_hash() {
                Some(h) => report.push_str(&format!("schema_hash {h}\n")),
                None => report.push_str("schema_hash none\n"),
            }
            if let Some(columns) = columns {
                let names: Vec<String> = columns.iter().map(|(n, t)| format!("{n} {t}")).collect();
                report.push_str(&format!("hashed columns: {}\n", names.join(", ")));
            }
            output::stdout(report.as_bytes())
        }
    }
}
