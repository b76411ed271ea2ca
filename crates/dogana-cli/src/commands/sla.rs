//! `dogana sla --store DB --odcs FILE [--at TIME] [--json]`: an ODCS document's service levels
//! (`slaProperties`) checked against each schema object's table in a store: met, missed (and
//! since when), or not checkable (and why), from the table's claims (`Ledger::claims`). The
//! mapping of each property to the ledger's dates is `dogana_columns::sla`'s
//! (docs/decisions.md, "Service levels from the ledger").
//!
//! Exit status 1 (DGN-502) when one is missed, after the report; a property the ledger cannot
//! answer is reported as not checkable and misses nothing.

use dogana::{Duration, Timestamp};
use dogana_codes as codes;
use dogana_columns::odcs::{self, SchemaObject};
use dogana_columns::sla::{self, Status};
use serde_json::{json, Value};

use crate::cli::SlaArgs;
use crate::commands::{claims, receiver};
use crate::input::{self, shown};
use crate::output;
use crate::refusal::{refuse, Refusal, Result};
use crate::typed;

/// One verdict, for the report.
struct Verdict<'a> {
    object: &'a SchemaObject,
    sla: &'a odcs::SlaProperty,
    shown: String,
    status: Status,
    complete_as_of: Option<Timestamp>,
    newest_complete_as_of: Option<Timestamp>,
    deletions_as_of: Option<Timestamp>,
}

fn time(t: Option<Timestamp>) -> String {
    t.map_or_else(|| "unknown".to_owned(), |t| t.to_string())
}

fn time_json(t: Option<Timestamp>) -> Value {
    t.map_or(Value::Null, |t| Value::String(t.to_string()))
}

impl Verdict<'_> {
    fn line(&self) -> String {
        let dates = format!(
            "complete as of {}; newest complete as of {}; deletions as of {}",
            time(self.complete_as_of),
            time(self.newest_complete_as_of),
            time(self.deletions_as_of)
        );
        let status = match &self.status {
            Status::Met => format!("met; {dates}"),
            Status::Missed { since: Some(t) } => format!("missed since {t}; {dates}"),
            Status::Missed { since: None } => {
                format!("missed: a region of the table was never proven complete; {dates}")
            }
            Status::NotCheckable(why) => format!("not checkable: {why}"),
        };
        format!("{} {}: {status}", self.object.table(), self.shown)
    }

    fn json(&self) -> Value {
        let (status, since, reason) = match &self.status {
            Status::Met => ("met", Value::Null, Value::Null),
            Status::Missed { since } => ("missed", time_json(*since), Value::Null),
            Status::NotCheckable(why) => ("not_checkable", Value::Null, Value::String(why.clone())),
        };
        json!({
            "table": self.object.table(),
            "schema": self.object.name,
            "index": self.sla.index,
            "property": self.sla.property,
            "value": self.sla.value,
            "unit": self.sla.unit,
            "status": status,
            "since": since,
            "reason": reason,
            "complete_as_of": time_json(self.complete_as_of),
            "newest_complete_as_of": time_json(self.newest_complete_as_of),
            "deletions_as_of": time_json(self.deletions_as_of),
        })
    }
}

pub fn run(a: SlaArgs) -> Result<()> {
    let name = shown(&a.odcs);
    let Ok(text) = String::from_utf8(input::read(&a.odcs, "ODCS document")?) else {
        refuse!(
            codes::DATA_CONTRACT_INVALID,
            "the ODCS document {name} is not UTF-8 text"
        )
    };
    let doc = odcs::parse(&text, odcs::Format::of(&name), &name)
        .map_err(|e| Refusal::new(codes::DATA_CONTRACT_INVALID, e.to_string()))?;
    if doc.sla_properties.is_empty() {
        refuse!(
            codes::DATA_CONTRACT_INVALID,
            "ODCS document {name} has no slaProperties: nothing to check; add one, as in slaProperties: [{{property: latency, value: 1, unit: d, element: orders}}]"
        )
    }
    // every property read and every element resolved before a store is opened
    let mut asked = Vec::new();
    for s in &doc.sla_properties {
        let req = sla::requirement(&name, s)
            .map_err(|e| Refusal::new(codes::DATA_CONTRACT_INVALID, e.to_string()))?;
        let objects = doc
            .objects_of(s)
            .map_err(|e| Refusal::new(codes::DATA_CONTRACT_INVALID, e.to_string()))?;
        if objects.is_empty() {
            refuse!(
                codes::DATA_CONTRACT_INVALID,
                "ODCS document {name}: slaProperties[{}] applies to no schema object: the schema lists none",
                s.index
            )
        }
        asked.push((s, req, objects));
    }
    let at = match &a.at {
        Some(text) => typed::time("--at", text)?,
        None => claims::now()?,
    };
    let mut ledgers: Vec<(String, dogana::Claims)> = Vec::new();
    let mut verdicts = Vec::new();
    for (s, req, objects) in &asked {
        for object in objects {
            let table = object.table();
            if let sla::Measure::NotCheckable(why) = req.measure {
                // the ledger cannot answer it: no need for the table to exist
                verdicts.push(Verdict {
                    object,
                    sla: s,
                    shown: req.shown.clone(),
                    status: Status::NotCheckable(why.to_owned()),
                    complete_as_of: None,
                    newest_complete_as_of: None,
                    deletions_as_of: None,
                });
                continue;
            }
            if !ledgers.iter().any(|(t, _)| t == table) {
                let ledger = receiver::stored_ledger(&a.store, std::path::Path::new(table))?;
                let c = ledger
                    .claims(at, Duration::MAX, None)
                    .expect("claims without a window are always taken");
                ledgers.push((table.to_owned(), c));
            }
            let c = &ledgers.iter().find(|(t, _)| t == table).expect("read").1;
            verdicts.push(Verdict {
                object,
                sla: s,
                shown: req.shown.clone(),
                status: sla::check(req, c, at),
                complete_as_of: c.complete_as_of(),
                newest_complete_as_of: sla::newest_complete_as_of(c),
                deletions_as_of: c.deletions_as_of(),
            });
        }
    }
    let missed: Vec<&Verdict> = verdicts
        .iter()
        .filter(|v| matches!(v.status, Status::Missed { .. }))
        .collect();
    let report = if a.json {
        let doc = json!({
            "at": at.to_string(),
            "met": missed.is_empty(),
            "slas": verdicts.iter().map(Verdict::json).collect::<Vec<_>>(),
        });
        format!("{doc}\n")
    } else {
        let mut out = String::new();
        for v in &verdicts {
            out.push_str(&output::sender_text(&v.line()));
            out.push('\n');
        }
        out
    };
    output::stdout(report.as_bytes())?;
    if let Some(first) = missed.first() {
        refuse!(
            codes::SLA_MISSED,
            "{} service level{} of {name} missed at {at}, first {} {}; deliver a read that proves the table complete (dogana plan --store {} {} names one)",
            missed.len(),
            if missed.len() == 1 { "" } else { "s" },
            first.object.table(),
            first.shown,
            receiver::shown(&a.store),
            first.object.table()
        )
    }
    Ok(())
}
