//! CSV: a header row, then one record per row; an empty field is null.

use std::borrow::Cow;
use std::io::Read;

use dogana::{quoted_bytes, LogicalType, NAME_MAX, SHOWN};

use crate::cell::{parse_typed_in, show, Cell, Typed};
use crate::checker::{Checker, Slot};
use crate::csv_fast::{Records, MAX_HEADER};
use crate::error::RowsError;
use crate::row::{csv_field, Raw, Row};
use crate::{Options, RowCallback};

/// Where each bound column sits in the file.
pub(crate) struct Layout {
    pub(crate) keys: Vec<Option<usize>>,
    pub(crate) window: Option<usize>,
    pub(crate) cursor: Option<usize>,
    pub(crate) deleted: Option<usize>,
    /// (column, type) of every bound column present in the file
    pub(crate) bound: Vec<(usize, LogicalType)>,
}

impl Layout {
    pub(crate) fn new(checker: &Checker, columns: &[String]) -> Layout {
        let spec = &checker.spec;
        let find = |name: &str| columns.iter().position(|c| c == name);
        let bound = bound_columns(columns, |c| spec.bound_type(c));
        Layout {
            keys: spec.key_cols.iter().map(|k| find(k)).collect(),
            window: spec.window_col.as_ref().and_then(|(c, _)| find(c)),
            cursor: spec.cursor_col.as_ref().and_then(|(c, _)| find(c)),
            deleted: spec.deleted_col.as_deref().and_then(find),
            bound,
        }
    }
}

/// The bound columns of a file with these columns, and their types.
pub(crate) fn bound_columns(
    columns: &[String],
    bound_type: impl Fn(&str) -> Option<LogicalType>,
) -> Vec<(usize, LogicalType)> {
    let mut seen = std::collections::HashSet::new();
    // a repeated column name binds its first occurrence only
    columns
        .iter()
        .enumerate()
        .filter(|(_, c)| seen.insert(c.as_str()))
        .filter_map(|(i, c)| bound_type(c).map(|t| (i, t)))
        .collect()
}

/// A column's name as the header has it (lossy when it is not UTF-8).
pub(crate) fn header_name(f: &[u8]) -> String {
    match std::str::from_utf8(f) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(f).into_owned(),
    }
}

/// The header's problems: names that are not UTF-8, names that repeat.
pub(crate) fn header_names(fields: Vec<&[u8]>, checker: &mut Checker) -> Vec<String> {
    let mut columns: Vec<String> = Vec::with_capacity(fields.len());
    // a header may name half a million columns: find repeats in one pass
    let mut seen: std::collections::HashSet<String> =
        std::collections::HashSet::with_capacity(fields.len());
    for (i, f) in fields.into_iter().enumerate() {
        if f.len() > NAME_MAX {
            checker.file_problem(format!(
                "line 1: the name of column {} is {}: a column name is at most {NAME_MAX} bytes \
                 (CONTRACT-48)",
                i + 1,
                quoted_bytes(f, SHOWN)
            ));
        }
        let name = header_name(f);
        if std::str::from_utf8(f).is_err() {
            checker.file_problem(format!(
                "line 1: the name of column {} is not valid UTF-8: {}",
                i + 1,
                show(f)
            ));
        }
        if !seen.insert(name.clone()) {
            checker.file_problem(format!(
                "line 1: column {} appears twice in the header",
                crate::checker::shown_name(&name)
            ));
        }
        columns.push(name);
    }
    columns
}

/// The slot of a bound column in the current record.
#[inline]
fn slot_of<'a>(
    data: &'a [u8],
    ranges: &[(usize, usize)],
    typed: &[Option<Typed>],
    i: Option<usize>,
) -> Slot<'a> {
    let Some(i) = i else { return Slot::Absent };
    match typed[i] {
        None | Some(Typed::Bad) => Slot::Bad,
        Some(Typed::Text) => Slot::Val(Cell::Str(Cow::Borrowed(
            std::str::from_utf8(csv_field(data, ranges, i).unwrap_or_default()).unwrap_or_default(),
        ))),
        Some(t) => Slot::Val(t.to_cell("")),
    }
}

/// Where the values [`Checker::clean_row`] needs sit among a record's bound values (in the
/// order of [`bound_columns`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CleanLayout {
    key: usize,
    deleted: Option<usize>,
    window: Option<usize>,
    cursor: Option<usize>,
}

impl CleanLayout {
    /// Checks a record by [`Checker::clean_row`] from its bound values; false when it is not
    /// clean (a value did not parse, or a check would fail) and nothing was changed.
    #[inline]
    pub(crate) fn check(&self, checker: &mut Checker, line: u64, bound: &[Typed]) -> bool {
        if bound.iter().any(|t| matches!(t, Typed::Bad)) {
            return false;
        }
        checker.clean_row(
            line,
            bound[self.key],
            self.deleted.map(|j| bound[j]),
            self.window.map(|j| bound[j]),
            self.cursor.map(|j| bound[j]),
        )
    }
}

/// Checks CSV records once the header is known.
pub(crate) struct Body {
    pub(crate) columns: Vec<String>,
    layout: Layout,
    typed: Vec<Option<Typed>>,
}

impl Body {
    /// Reads the header record; refuses to go on when the column hash will need types the
    /// receiver did not give.
    pub(crate) fn new(
        checker: &mut Checker,
        column_types: &[(String, String)],
        data: &[u8],
        ranges: &[(usize, usize)],
    ) -> Result<Body, RowsError> {
        let columns = header_names(ranges.iter().map(|&(a, b)| &data[a..b]).collect(), checker);
        checker.require_types(&columns, column_types)?;
        let layout = Layout::new(checker, &columns);
        let typed = vec![None; columns.len()];
        Ok(Body {
            columns,
            layout,
            typed,
        })
    }

    /// The layout for [`Checker::clean_row`], when the file has the key's one column (a table
    /// with a composite or string key, or a file without its key column, is checked row by
    /// row only).
    pub(crate) fn clean_layout(&self) -> Option<CleanLayout> {
        let layout = &self.layout;
        let at = |col: Option<usize>| -> Option<Option<usize>> {
            match col {
                None => Some(None),
                Some(c) => layout.bound.iter().position(|&(b, _)| b == c).map(Some),
            }
        };
        let [Some(key)] = layout.keys[..] else {
            return None;
        };
        Some(CleanLayout {
            key: at(Some(key))??,
            deleted: at(layout.deleted)?,
            window: at(layout.window)?,
            cursor: at(layout.cursor)?,
        })
    }

    /// The bound columns (column, type) in the order of a record's bound values.
    pub(crate) fn bound(&self) -> &[(usize, LogicalType)] {
        &self.layout.bound
    }

    /// How many bound columns the file has.
    pub(crate) fn bound_len(&self) -> usize {
        self.layout.bound.len()
    }

    /// Checks one record (`ascii`: known to be ASCII, so valid UTF-8) and hands it to
    /// `on_row` when it parses. `pre`: the bound columns' values, in the order of
    /// [`bound_columns`], already parsed (a `Bad` one is parsed again, for its message).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &mut self,
        checker: &mut Checker,
        on_row: &mut RowCallback<'_>,
        line: u64,
        data: &[u8],
        ranges: &[(usize, usize)],
        ascii: bool,
        pre: Option<&[Typed]>,
    ) -> Result<(), RowsError> {
        let (columns, layout, typed) = (&self.columns, &self.layout, &mut self.typed);
        let n = columns.len();
        if ranges.len() != n {
            let got = ranges.len();
            checker.unreadable(line, || {
                format!("{got} fields where the header has {n} (a ragged or truncated row)")
            });
            return Ok(());
        }
        let mut error: Option<String> = None;
        if !ascii && std::str::from_utf8(data).is_err() {
            let (i, f) = ranges
                .iter()
                .map(|&(a, b)| &data[a..b])
                .enumerate()
                .find(|(_, f)| std::str::from_utf8(f).is_err())
                .unwrap_or((0, b""));
            error = Some(format!(
                "column {}: not valid UTF-8: {}",
                crate::checker::shown_name(&columns[i]),
                show(f)
            ));
        }
        for (j, &(i, ty)) in layout.bound.iter().enumerate() {
            let (a, b) = ranges[i];
            let parsed = match pre.and_then(|p| p.get(j)) {
                Some(&t) if t != Typed::Bad => Ok(t),
                _ => parse_typed_in(data, a, b, ty),
            };
            typed[i] = Some(match parsed {
                Ok(t) => t,
                Err(why) => {
                    if error.is_none() {
                        error = Some(format!(
                            "column {}: {why}",
                            crate::checker::shown_name(&columns[i])
                        ));
                    }
                    Typed::Bad
                }
            });
        }
        checker.key_start();
        for (k, &i) in layout.keys.iter().enumerate() {
            checker.key_part(k, &slot_of(data, ranges, typed, i));
        }
        let ok = error.is_none();
        let tomb = checker.row(
            line,
            slot_of(data, ranges, typed, layout.deleted),
            slot_of(data, ranges, typed, layout.window),
            slot_of(data, ranges, typed, layout.cursor),
            error,
        );
        if let (true, Some(tombstone)) = (ok, tomb) {
            on_row(&Row {
                columns,
                typed,
                raw: Raw::Csv { data, ranges },
                line,
                tombstone,
            })?;
        }
        Ok(())
    }
}

/// The problem of a CSV file without a header.
pub(crate) const EMPTY_FILE: &str = "the file is empty: a CSV delivery begins with a header row";

/// The problem of a first line too long to be a header (TRUST-07).
pub(crate) fn header_too_long() -> String {
    format!(
        "line 1: the first line is longer than {MAX_HEADER} bytes, and a header names columns of \
         at most {NAME_MAX} bytes each: this is no CSV header (a file without line ends, or not \
         CSV); the rows were not read"
    )
}

/// The problem of a record the end of the input finished inside quotes: the file is
/// truncated, or a quote is never closed (CHECK-02).
pub(crate) fn unterminated(opened: u64) -> String {
    format!(
        "the file ends inside the quoted field opened on line {opened}: the file is truncated, \
         or that quote is never closed"
    )
}

/// What became of the header record.
pub(crate) enum Header {
    /// The file has none: it is empty, or its first line is too long to be one.
    None,
    /// The end of the input came inside a quote of the header: nothing to check the rows by.
    Unterminated(u64),
}

impl Header {
    /// Reports the file's problem.
    pub(crate) fn report(self, checker: &mut Checker, too_long: bool) {
        checker.file_problem(match self {
            Header::None if too_long => header_too_long(),
            Header::None => EMPTY_FILE.into(),
            Header::Unterminated(line) => format!("line 1: {}", unterminated(line)),
        });
    }
}

/// Reads a CSV delivery from `input` in this thread, feeding `checker`; returns the columns.
pub(crate) fn run<R: Read>(
    input: R,
    checker: &mut Checker,
    options: &Options,
    column_types: &[(String, String)],
    on_row: &mut RowCallback<'_>,
) -> Result<(Vec<String>, R), RowsError> {
    let mut records = Records::new(input, options.delimiter);
    if !records.next_record()? {
        Header::None.report(checker, records.too_long());
        return Ok((Vec::new(), records.into_inner()));
    }
    if let Some(line) = records.unterminated() {
        Header::Unterminated(line).report(checker, false);
        return Ok((Vec::new(), records.into_inner()));
    }
    let mut body = {
        let (data, ranges) = records.parts();
        Body::new(checker, column_types, data, ranges)?
    };
    while records.next_record()? {
        if let Some(opened) = records.unterminated() {
            checker.unreadable(records.line(), || unterminated(opened));
            continue;
        }
        let (data, ranges) = records.parts();
        body.record(
            checker,
            on_row,
            records.line(),
            data,
            ranges,
            records.is_ascii(),
            None,
        )?;
    }
    Ok((body.columns, records.into_inner()))
}
