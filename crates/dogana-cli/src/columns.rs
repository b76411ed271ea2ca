//! The receiver's column list from the command line: `--column-type NAME=TYPE`, checked before
//! a byte of the delivery is read (CONTRACT-16, CONTRACT-19).
//!
//! A mistyped type (`flaot`, `money`, `decimal(2,5)`) or a NAME given twice would otherwise
//! only show as a column hash that does not match, or not at all; here it is a refusal (exit
//! 1) naming the option, the value and the forms allowed.
//!
//! The receiver command (`receiver.rs`, `deliver`) takes its list from [`column_list`]: the
//! TOML contract's `columns` the contract does not bind, then every `--column-type`, each
//! type parsed as [`ColumnType`], no column twice, no bound column. A NAME the delivered file
//! lacks needs the file's header, so the engine refuses it once the header is read, with
//! [`ColumnTypes::absent_from`] (see the report in the branch's last commit).

use dogana::{quoted, Contract, SHOWN};
use dogana_rows::{ColumnType, ColumnTypes};

use dogana_codes as codes;

use crate::refusal::{refuse, Result};

/// One `--column-type NAME=TYPE`, its type checked.
pub fn parse_option(pair: &str) -> Result<(String, ColumnType)> {
    let Some((name, ty)) = pair.split_once('=') else {
        refuse!(
            codes::OPTION_INVALID,
            "--column-type {} is not NAME=TYPE; write it as in --column-type amount=decimal(12,2)",
            quoted(pair, SHOWN)
        )
    };
    match ty.parse::<ColumnType>() {
        Ok(t) => Ok((name.to_owned(), t)),
        Err(e) => refuse!(
            codes::OPTION_INVALID,
            "--column-type {}: {e}",
            quoted(pair, SHOWN)
        ),
    }
}

/// Every `--column-type`, in order, checked: each NAME=TYPE with a type of the protocol and
/// each NAME once. Needs no contract, so `main` runs it before anything is read.
pub fn parse_options(pairs: &[String]) -> Result<ColumnTypes> {
    let mut list = ColumnTypes::new();
    for pair in pairs {
        let (name, ty) = parse_option(pair)?;
        if let Err(e) = list.push(&name, ty) {
            refuse!(
                codes::OPTION_INVALID,
                "--column-type {}: {e}; give each column once",
                quoted(pair, SHOWN)
            )
        }
    }
    Ok(list)
}

/// The column list for reading a delivery under `contract`: the TOML contract's `columns`
/// that the contract does not bind (their types as the TOML reader checked them), then every
/// `--column-type` ([`parse_options`]). Refuses a `--column-type` for a bound column (its
/// type is the contract's) or for a column the TOML list already types.
pub fn column_list(
    contract: &Contract,
    toml_columns: &[(String, String)],
    options: &[String],
) -> Result<ColumnTypes> {
    let bound = |name: &str| contract.types().get(name).copied();
    let mut list = ColumnTypes::new();
    for (name, ty) in toml_columns {
        if bound(name).is_some() {
            continue;
        }
        let t = match ty.parse::<ColumnType>() {
            Ok(t) => t,
            Err(e) => refuse!(
                codes::CONTRACT_INVALID,
                "the contract's columns: column {}: {e}",
                quoted(name, SHOWN)
            ),
        };
        if let Err(e) = list.push(name, t) {
            refuse!(codes::CONTRACT_INVALID, "the contract's columns: {e}")
        }
    }
    for (name, t) in &parse_options(options)? {
        if let Some(ty) = bound(name) {
            refuse!(
                codes::OPTION_INVALID,
                "--column-type {name}={t}: the contract binds column {} to {ty}; drop the option",
                quoted(name, SHOWN)
            )
        }
        if let Some(listed) = list.get(name) {
            refuse!(codes::OPTION_INVALID, "--column-type {name}={t}: the contract's columns already type {} as {listed}; drop the option, or change the contract",
                quoted(name, SHOWN)
            )
        }
        if let Err(e) = list.push(name, t) {
            refuse!(codes::OPTION_INVALID, "--column-type {name}={t}: {e}")
        }
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(r: Result<ColumnTypes>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn mistyped_and_repeated_options_are_refused() {
        // rule: CONTRACT-16
        let opts = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let e = refusal(parse_options(&opts(&["amount=flaot"])));
        assert!(
            e.starts_with("--column-type \"amount=flaot\": \"flaot\" is not a column type: a column type is int, float, str, bool, date, datetime or decimal(p,s)"),
            "{e}"
        );
        let e = refusal(parse_options(&opts(&["amount=decimal(2,5)"])));
        assert!(
            e.contains("its scale 5 is more than its precision 2"),
            "{e}"
        );
        let e = refusal(parse_options(&opts(&["amount=money"])));
        assert!(e.contains("\"money\" is not a column type"), "{e}");
        let e = refusal(parse_options(&opts(&["amount=float", "amount=str"])));
        assert!(
            e.contains("column \"amount\" is typed twice, as float and as str"),
            "{e}"
        );
        let e = refusal(parse_options(&opts(&["amount"])));
        assert!(e.contains("is not NAME=TYPE"), "{e}");
        let e = refusal(parse_options(&opts(&["=int"])));
        assert!(e.contains("a column name is 1 to 1024 bytes"), "{e}");
        let list = parse_options(&opts(&["amount=decimal(12,2)", "customer=str"])).unwrap();
        assert_eq!(list.len(), 2);
    }

    #[test]
    fn the_list_joins_the_contract_columns_and_the_options() {
        // rule: CONTRACT-16, CONTRACT-19
        use dogana::{LogicalType, Shape};
        let c = Contract::builder("orders", ["id"])
            .shape("full", Shape::full())
            .column("id", LogicalType::Int)
            .build()
            .unwrap();
        let toml = vec![
            ("id".to_owned(), "int".to_owned()),
            ("amount".to_owned(), "decimal(12,2)".to_owned()),
        ];
        let list = column_list(&c, &toml, &["customer=str".to_owned()]).unwrap();
        let got: Vec<String> = list.iter().map(|(n, t)| format!("{n} {t}")).collect();
        assert_eq!(got, ["amount decimal(12,2)", "customer str"]);
        let e = refusal(column_list(&c, &toml, &["id=str".to_owned()]));
        assert!(e.contains("the contract binds column \"id\" to int"), "{e}");
        let e = refusal(column_list(&c, &toml, &["amount=float".to_owned()]));
        assert!(
            e.contains("already type \"amount\" as decimal(12,2)"),
            "{e}"
        );
    }
}
