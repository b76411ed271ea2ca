//! The read routes: a table's claims, receipts, the cheapest read that would give it the dates
//! asked, and the next read of a shape. Each opens the store for reading only; a store or a
//! table nobody delivered to yet answers as an empty ledger (nothing claimed).

use axum::http::StatusCode;
use dogana::{
    next_extraction, plan_delivery, Date, Duration, Ledger, LogicalType, Requirement, Timestamp,
    Value, Window, Wire,
};
use dogana_codes as codes;
use dogana_stores::Spec;
use serde::Deserialize;

use crate::contracts::TableContract;
use crate::deliver::{now, open_reader, outcome_name};
use crate::error::ApiError;

fn bad(field: &str, value: &str, message: String) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        codes::OPTION_INVALID,
        "CLI-10",
        message,
    )
    .at(field, value)
}

/// An instant: RFC 3339 with a UTC offset.
fn time(field: &str, text: &str) -> Result<Timestamp, ApiError> {
    text.parse::<Timestamp>().map_err(|e| {
        bad(
            field,
            text,
            format!("{field}: {e}; write a time with Z or ±HH:MM, as in 2026-10-26T06:00:00Z"),
        )
    })
}

/// `limit_days`: a nonnegative number of days, to the microsecond; beyond the largest
/// duration it expires nothing.
fn days(text: &str) -> Result<Duration, ApiError> {
    let refuse = || {
        bad(
            "limit_days",
            text,
            "limit_days is a nonnegative number of days, such as 2 or 1.5".into(),
        )
    };
    let d: f64 = text.trim().parse().map_err(|_| refuse())?;
    if d.is_nan() || d < 0.0 {
        return Err(refuse());
    }
    let micros = d * 86_400_000_000.0;
    if micros >= Duration::MAX.as_micros() as f64 {
        return Ok(Duration::MAX);
    }
    Duration::from_micros(micros.round() as i128).map_err(|_| refuse())
}

/// `window=LOW,HIGH`, typed by the contract's window column.
fn window(table: &TableContract, text: &str) -> Result<Window, ApiError> {
    let contract = &table.contract;
    let (Some(column), Some(ty)) = (contract.window_column(), contract.window_type()) else {
        return Err(bad(
            "window",
            text,
            "the table has no window column; drop window".into(),
        ));
    };
    let Some((low, high)) = text.split_once(',') else {
        return Err(bad("window", text, "window is LOW,HIGH".into()));
    };
    let value = |side: &str, v: &str| -> Result<Value, ApiError> {
        let wrong = || {
            bad(
                "window",
                text,
                format!(
                    "{side} {v:?} is not a value of the window column {column:?}, which is {ty}"
                ),
            )
        };
        match ty {
            LogicalType::Int => v.parse::<i64>().map(Value::Int).map_err(|_| wrong()),
            LogicalType::Str => Ok(Value::Str(v.to_owned())),
            LogicalType::Date => v.parse::<Date>().map(Value::Date).map_err(|_| wrong()),
            LogicalType::Datetime => v
                .parse::<Timestamp>()
                .map(Value::Datetime)
                .map_err(|_| wrong()),
            LogicalType::Float | LogicalType::Bool => Err(wrong()),
        }
    };
    Ok(Window::new(value("LOW", low)?, value("HIGH", high)?))
}

/// The stored ledger of the table, or an empty one under its contract.
fn ledger(store: &Spec, table: &TableContract) -> Result<Ledger, ApiError> {
    let name = table.contract.table();
    let Some(mut opened) = open_reader(store)? else {
        return Ok(Ledger::new(table.contract.clone()));
    };
    let stored = opened
        .ledger(name)
        .map_err(|e| ApiError::store("reading the ledger", &e))?;
    Ok(stored.unwrap_or_else(|| Ledger::new(table.contract.clone())))
}

/// `GET …/claims` parameters.
#[derive(Debug, Deserialize)]
pub struct ClaimsQuery {
    at: Option<String>,
    limit_days: Option<String>,
    window: Option<String>,
}

/// The claims at `at` (now by default): `{"claims": …, "dates": {complete_as_of,
/// deletions_as_of, exact_as_of}}`.
pub fn claims(
    store: &Spec,
    table: &TableContract,
    q: &ClaimsQuery,
) -> Result<serde_json::Value, ApiError> {
    let at =
        q.at.as_deref()
            .map(|t| time("at", t))
            .transpose()?
            .unwrap_or_else(now);
    let limit = q
        .limit_days
        .as_deref()
        .map(days)
        .transpose()?
        .unwrap_or(Duration::MAX);
    let window = q.window.as_deref().map(|w| window(table, w)).transpose()?;
    let ledger = ledger(store, table)?;
    let claims = ledger.claims(at, limit, window.as_ref()).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            codes::OPTION_INVALID,
            "CLAIMS-01",
            format!("cannot cut the claims: {}", e.problem()),
        )
    })?;
    let show = |t: Option<Timestamp>| t.map(|t| t.to_string());
    Ok(serde_json::json!({
        "claims": claims.to_value(),
        "dates": {
            "complete_as_of": show(claims.complete_as_of()),
            "deletions_as_of": show(claims.deletions_as_of()),
            "exact_as_of": show(claims.exact_as_of()),
        }
    }))
}

/// Every receipt kept, in order: `[{"seq", "accepted_order", "outcome", "identity", "receipt"}]`.
pub fn receipts(store: &Spec, table: &TableContract) -> Result<serde_json::Value, ApiError> {
    let Some(mut opened) = open_reader(store)? else {
        return Ok(serde_json::json!([]));
    };
    let receipts = opened
        .receipts(table.contract.table())
        .map_err(|e| ApiError::store("reading the receipts", &e))?;
    Ok(serde_json::Value::Array(
        receipts
            .iter()
            .map(|r| {
                serde_json::json!({
                    "seq": r.seq,
                    "accepted_order": r.accepted_order,
                    "outcome": outcome_name(r.receipt.outcome()),
                    "identity": r.receipt.identity(),
                    "receipt": r.receipt.to_value(),
                })
            })
            .collect(),
    ))
}

/// `GET …/plan` parameters.
#[derive(Debug, Deserialize)]
pub struct PlanQuery {
    complete_as_of: Option<String>,
    deletions_as_of: Option<String>,
    window: Option<String>,
}

fn planning(e: &dogana::PlanningError) -> ApiError {
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        codes::PLANNING_REFUSED,
        "serve.plan",
        e.to_string(),
    )
}

/// The cheapest read that gives the table the dates asked: `{"requirement", "extraction"}`,
/// the extraction null when the claims already meet the requirement.
pub fn plan(
    store: &Spec,
    table: &TableContract,
    q: &PlanQuery,
) -> Result<serde_json::Value, ApiError> {
    let complete = q
        .complete_as_of
        .as_deref()
        .map(|t| time("complete_as_of", t))
        .transpose()?
        .unwrap_or_else(now);
    let mut requirement = Requirement::new(table.contract.table(), complete);
    if let Some(d) = &q.deletions_as_of {
        requirement = requirement.with_deletions_as_of(time("deletions_as_of", d)?);
    }
    if let Some(w) = &q.window {
        requirement = requirement.with_window(window(table, w)?);
    }
    let ledger = ledger(store, table)?;
    let planned = plan_delivery(&ledger, &requirement).map_err(|e| planning(&e))?;
    Ok(serde_json::json!({
        "requirement": requirement.to_value(),
        "extraction": planned.as_ref().map(Wire::to_value),
    }))
}

/// `GET …/next` parameters.
#[derive(Debug, Deserialize)]
pub struct NextQuery {
    shape: Option<String>,
    until: Option<String>,
    window: Option<String>,
}

/// The next read of a shape, up to `until` (now by default): `{"extraction"}`.
pub fn next(
    store: &Spec,
    table: &TableContract,
    q: &NextQuery,
) -> Result<serde_json::Value, ApiError> {
    let Some(shape) = q.shape.as_deref() else {
        return Err(
            ApiError::bad_request("serve.query", "name the shape: ?shape=NAME").at("shape", ""),
        );
    };
    if table.contract.shape(shape).is_none() {
        let known: Vec<&str> = table.contract.shapes().keys().map(String::as_str).collect();
        return Err(bad(
            "shape",
            shape,
            format!(
                "the contract has no such shape; it has {}",
                known.join(", ")
            ),
        ));
    }
    let until = q
        .until
        .as_deref()
        .map(|t| time("until", t))
        .transpose()?
        .unwrap_or_else(now);
    let window = q.window.as_deref().map(|w| window(table, w)).transpose()?;
    let ledger = ledger(store, table)?;
    let x = next_extraction(&ledger, shape, until, window.as_ref()).map_err(|e| planning(&e))?;
    Ok(serde_json::json!({ "extraction": x.to_value() }))
}
