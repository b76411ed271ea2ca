//! `dogana contract FILE.toml [-o PATH]`: the contract's full wire document from its TOML
//! description (docs/contract-toml.md); its columns may come from an ODCS document, a dbt
//! manifest, a live table or a Parquet file (`--odcs`, `--dbt-manifest`, `--from-table`,
//! `--from-parquet`, or the description's `columns_from`).
//!
//! Without `-o`, standard output gets the document and nothing else, so it can be piped. With
//! `-o PATH`, the document is written to PATH (atomically; an existing file only with `--force`)
//! and standard output gets `wrote PATH (Contract <identity>)` and `schema_hash <hash>` (or
//! `schema_hash none`), then, when columns computed it, where they came from and the hashed
//! column list. Without FILE, a source's columns are printed the same way, with their hash
//! (every column: only a contract knows which is its deleted column, CONTRACT-18).

use crate::cli::ContractArgs;
use crate::columns_from::Source;
use crate::input::{self, shown};
use crate::output;
use crate::refusal::{refuse, Result};
use crate::toml_contract;
use dogana::Wire;
use dogana_codes as codes;

/// How the report names a source of columns.
fn described(source: &Source) -> String {
    match source {
        Source::Odcs { file, schema } => {
            format!(
                "ODCS document {}, schema {}",
                shown(file),
                dogana::quoted(schema, 200)
            )
        }
        Source::Dbt { file, model } => {
            format!(
                "dbt manifest {}, model {}",
                shown(file),
                dogana::quoted(model, 200)
            )
        }
        Source::Table { store, table } => format!(
            "store {}, table {}",
            dogana_stores::Spec::parse(store),
            dogana::quoted(table, 200)
        ),
        Source::Parquet { file } => format!("Parquet file {}", shown(file)),
    }
}

/// The lines naming the source and the hashed columns.
fn columns_report(source: Option<&Source>, columns: &[(String, String)]) -> String {
    let mut report = String::new();
    if let Some(source) = source {
        report.push_str(&format!(
            "columns from {}\n",
            output::sender_text(&described(source))
        ));
    }
    let names: Vec<String> = columns.iter().map(|(n, t)| format!("{n} {t}")).collect();
    report.push_str(&format!(
        "hashed columns: {}\n",
        output::sender_text(&names.join(", "))
    ));
    report
}

pub fn run(args: ContractArgs) -> Result<()> {
    let external = Source::from_args(&args.columns);
    let Some(file) = &args.file else {
        // only a source: its columns and their hash
        let source = external.expect("clap requires FILE or a source");
        if let Some(path) = &args.output {
            refuse!(
                codes::OPTION_INVALID,
                "-o {} writes a contract, and no contract is named: give the TOML description (dogana contract FILE.toml --odcs … -o PATH), or drop -o to print the columns",
                shown(path)
            )
        }
        let columns = source.read()?;
        let mut report = columns_report(Some(&source), &columns.pairs());
        report.push_str(&format!("schema_hash {}\n", columns.hash()));
        return output::stdout(report.as_bytes());
    };
    let bytes = input::read(file, "contract")?;
    let (contract, columns, source) = if input::is_toml(file, &bytes) {
        let Ok(text) = std::str::from_utf8(&bytes) else {
            refuse!(
                codes::CONTRACT_INVALID,
                "contract {} is not UTF-8 text",
                shown(file)
            )
        };
        let parsed = toml_contract::parse(
            text,
            &shown(file),
            &input::base_dir(file),
            external.as_ref(),
        )?;
        (
            parsed.contract,
            parsed.hashed_columns,
            parsed.columns_source,
        )
    } else {
        if external.is_some() {
            refuse!(
                codes::OPTION_INVALID,
                "contract {} is a wire document, whose schema_hash is fixed; take columns from a source in a TOML description",
                shown(file)
            )
        }
        (input::contract(file)?, None, None)
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
                report.push_str(&columns_report(source.as_ref(), &columns));
            }
            output::stdout(report.as_bytes())
        }
    }
}
