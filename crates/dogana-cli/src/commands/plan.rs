//! Reading what a store holds and planning from it:
//!
//! - `dogana ledger --store DB TABLE`: the stored ledger document (`ledger.to_json()`), which
//!   `dogana claims -` and other implementations read;
//! - `dogana plan --store DB TABLE --complete-as-of T [--deletions-as-of T] [--window LOW HIGH]
//!   [--at NOW] [--json]`: `plan_delivery`'s cheapest read meeting the requirement, or that the
//!   claims already meet it (exit 0), or the planning error with why each shape failed (exit 1);
//! - `dogana plan --together --store DB TABLE TABLE... [--at NOW]`: `plan_together`'s requests
//!   at one `until`;
//! - `dogana next --store DB TABLE --shape NAME --until T [--window LOW HIGH]`:
//!   `next_extraction`'s request.
//!
//! `--json` prints the wire documents: the Requirement and the Extraction (null when none is
//! needed), or a JSON array of Extractions.

use dogana::{next_extraction, plan_delivery, plan_together, Extraction, Group, Requirement, Wire};
use serde_json::Value;

use crate::cli::{ClaimsArgs, LedgerArgs, NextArgs, PlanArgs};
use crate::commands::{claims, receiver};
use crate::output;
use crate::refusal::{refuse, Result};
use crate::typed;
use dogana_codes as codes;

pub fn ledger(a: LedgerArgs) -> Result<()> {
    let ledger = receiver::stored_ledger(&a.store, std::path::Path::new(&a.table))?;
    output::json(&format!("{}\n", ledger.to_json()))
}

/// One extraction's lines: what to read, and the boundary the extractor reads at.
fn extraction_lines(out: &mut output::Lines, x: &Extraction) {
    out.line(x.to_string());
    out.line(format!(
        "  read the source at {} and declare produced_at {} (dogana manifest --shape {} --produced-at {})",
        x.until(),
        x.until(),
        x.shape(),
        x.until()
    ));
}

fn planning_refusal(e: &dogana::PlanningError) -> crate::refusal::Refusal {
    crate::refusal::Refusal::new(codes::PLANNING_REFUSED, format!("{e}"))
}

pub fn plan(a: PlanArgs) -> Result<()> {
    let at = match &a.at {
        Some(t) => typed::time("--at", t)?,
        None => claims::now()?,
    };
    if a.together {
        return together(a, at);
    }
    let [table] = &a.tables[..] else {
        refuse!(
            codes::OPTION_INVALID,
            "{} tables given: plan one table, or several at one instant with --together",
            a.tables.len()
        )
    };
    let ledger = receiver::stored_ledger(&a.store, std::path::Path::new(table))?;
    let complete = match &a.complete_as_of {
        Some(t) => typed::time("--complete-as-of", t)?,
        None => at,
    };
    let mut requirement = Requirement::new(ledger.contract().table(), complete);
    if let Some(d) = &a.deletions_as_of {
        requirement = requirement.with_deletions_as_of(typed::time("--deletions-as-of", d)?);
    }
    if let Some(bounds) = &a.window {
        requirement = requirement.with_window(typed::window(
            ledger.contract(),
            bounds,
            "plan the whole table without --window",
        )?);
    }
    let planned = plan_delivery(&ledger, &requirement).map_err(|e| planning_refusal(&e))?;
    let out = if a.json {
        let mut obj = serde_json::Map::new();
        obj.insert("requirement".into(), requirement.to_value());
        obj.insert(
            "extraction".into(),
            planned.as_ref().map_or(Value::Null, Wire::to_value),
        );
        return output::json(&format!(
            "{}\n",
            dogana_json::canonical(&Value::Object(obj))
        ));
    } else {
        let mut lines = output::Lines::new();
        match &planned {
            None => lines.line(format!(
                "{}: the claims already meet {requirement}; no read is needed",
                ledger.contract().table()
            )),
            Some(x) => extraction_lines(&mut lines, x),
        }
        lines.text().to_owned()
    };
    output::stdout(out.as_bytes())
}

fn together(a: PlanArgs, at: dogana::Timestamp) -> Result<()> {
    if a.complete_as_of.is_some() || a.deletions_as_of.is_some() || a.window.is_some() {
        refuse!(codes::OPTION_INVALID, "--together plans one exact instant no earlier than --at: drop --complete-as-of, --deletions-as-of and --window")
    }
    let mut ledgers = Vec::new();
    for table in &a.tables {
        ledgers.push(receiver::stored_ledger(
            &a.store,
            std::path::Path::new(table),
        )?);
    }
    let group = match Group::new(ledgers.iter().map(|l| l.contract().clone())) {
        Ok(g) => g,
        Err(e) => refuse!(
            codes::GROUP_INVALID,
            "these tables are not one group: {}",
            e.problem()
        ),
    };
    let planned = plan_together(&group, &ledgers, at, None).map_err(|e| planning_refusal(&e))?;
    let out = if a.json {
        let docs: Vec<Value> = planned.iter().flatten().map(Wire::to_value).collect();
        return output::json(&format!(
            "{}\n",
            dogana_json::canonical(&Value::Array(docs))
        ));
    } else {
        let mut lines = output::Lines::new();
        match &planned {
            None => lines.line(format!(
                "{}: already exact together at an instant no earlier than {at}; no read is needed",
                a.tables.join(" + ")
            )),
            Some(list) => list.iter().for_each(|x| extraction_lines(&mut lines, x)),
        }
        lines.text().to_owned()
    };
    output::stdout(out.as_bytes())
}

pub fn next(a: NextArgs) -> Result<()> {
    let ledger = receiver::stored_ledger(&a.store, std::path::Path::new(&a.table))?;
    let until = typed::time("--until", &a.until)?;
    let window = match &a.window {
        Some(bounds) => Some(typed::window(ledger.contract(), bounds, "drop --window")?),
        None => None,
    };
    let x = next_extraction(&ledger, &a.shape, until, window.as_ref())
        .map_err(|e| planning_refusal(&e))?;
    if a.json {
        return output::json(&format!("{}\n", x.to_json()));
    }
    let mut lines = output::Lines::new();
    extraction_lines(&mut lines, &x);
    lines.print()
}

/// `dogana claims --store DB TABLE TABLE...`: every table's regions, then the minima across
/// the tables and the group's exact instant (`Group::claims`), each table cut to its
/// `--window TABLE=LOW,HIGH`.
pub fn group_claims(a: ClaimsArgs) -> Result<()> {
    let Some(db) = &a.store else {
        refuse!(
            codes::OPTION_INVALID,
            "several tables are read from a store: dogana claims --store DB TABLE TABLE..."
        )
    };
    let mut names: Vec<String> = a
        .ledger
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    names.extend(a.tables.iter().cloned());
    let mut ledgers = Vec::new();
    for t in &names {
        ledgers.push(receiver::stored_ledger(db, std::path::Path::new(t))?);
    }
    let group = match Group::new(ledgers.iter().map(|l| l.contract().clone())) {
        Ok(g) => g,
        Err(e) => refuse!(
            codes::GROUP_INVALID,
            "these tables are not one group: {}",
            e.problem()
        ),
    };
    let at = match &a.at {
        Some(t) => typed::time("--at", t)?,
        None => claims::now()?,
    };
    let limit = a.limit_days.unwrap_or(dogana::Duration::MAX);
    let mut windows = std::collections::BTreeMap::new();
    for spec in a.window.iter().flatten() {
        let Some((table, bounds)) = spec.split_once('=') else {
            refuse!(
                codes::OPTION_INVALID,
                "--window {spec:?}: with several tables write --window TABLE=LOW,HIGH"
            )
        };
        let Some(ledger) = ledgers
            .iter()
            .find(|l| l.contract().table().eq_ignore_ascii_case(table))
        else {
            refuse!(
                codes::OPTION_INVALID,
                "--window {spec:?}: {table:?} is not one of the tables read"
            )
        };
        let Some((low, high)) = bounds.split_once(',') else {
            refuse!(
                codes::OPTION_INVALID,
                "--window {spec:?}: write the window as LOW,HIGH"
            )
        };
        let w = typed::window(
            ledger.contract(),
            &[low.to_owned(), high.to_owned()],
            "drop its --window",
        )?;
        windows.insert(ledger.contract().table().to_owned(), w);
    }
    let windows = (!windows.is_empty()).then_some(windows);
    let claims = match group.claims(&ledgers, at, limit, windows.as_ref()) {
        Ok(c) => c,
        Err(e) => refuse!(
            codes::GROUP_INVALID,
            "cannot read the tables together: {}",
            e.problem()
        ),
    };
    let tables: Vec<&str> = group.tables().collect();
    let label = tables.join(" + ");
    let out = if a.json && a.dates {
        return output::json(&claims::dated_json(&claims, &tables));
    } else if a.json {
        return output::json(&format!("{}\n", claims.to_json()));
    } else {
        let mut buf = Vec::new();
        claims::print(&claims, &label, &mut buf).expect("writing to memory");
        let mut s = String::from_utf8(buf).expect("the lines are text");
        if a.dates {
            s.push_str(&output::sender_text(&claims::dates_line(&claims, &label)));
            s.push('\n');
        }
        s
    };
    output::stdout(output::shown_lines(&out).as_bytes())
}
