//! An ODCS v3 document (the Open Data Contract Standard): a schema object's columns, and the
//! document's service levels.
//!
//! A schema object's columns are its `properties` in declared order, one `[name, type]` pair
//! each (CONTRACT-16). The type (CONTRACT-19):
//!
//! 1. a `physicalType` decides where it names an exact decimal, a timestamp or a date
//!    ([`crate::sql_types`]): `decimal(12,2)` or `numeric(12,2)` is `decimal(12,2)`,
//!    `timestamp` or `timestamptz` is `datetime`, `date` is `date`; a decimal without its
//!    precision and scale is refused;
//! 2. otherwise the `logicalType`, by [`LOGICAL_TYPES`]: `integer` is `int`, `number`
//!    `float`, `string` `str`, `boolean` `bool`, `date` `date`, `timestamp` `datetime`;
//!    `time`, `object`, `array` and `map` have no dogana name and are refused;
//! 3. a property with neither is refused: it has no type.
//!
//! YAML is read with `serde_norway`, JSON with `serde_json` (docs/decisions.md). Only the keys
//! read here are interpreted; the others (quality, team, servers…) are left alone.

use serde::Deserialize;
use serde_json::Value;

use dogana_rows::ColumnType;

use crate::sql_types::{self, Target};
use crate::{q, Columns, ColumnsError};

/// ODCS logical types and their dogana type; None: no dogana name (a time of day, or a nested
/// type).
pub const LOGICAL_TYPES: &[(&str, Option<ColumnType>)] = &[
    ("integer", Some(ColumnType::Int)),
    ("number", Some(ColumnType::Float)),
    ("string", Some(ColumnType::Str)),
    ("boolean", Some(ColumnType::Bool)),
    ("date", Some(ColumnType::Date)),
    ("timestamp", Some(ColumnType::Datetime)),
    ("time", None),
    ("object", None),
    ("array", None),
    ("map", None),
];

/// How the document is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// YAML (the ODCS examples' form).
    Yaml,
    /// JSON.
    Json,
}

impl Format {
    /// JSON for a name ending `.json`, YAML otherwise.
    pub fn of(file_name: &str) -> Format {
        if file_name.to_ascii_lowercase().ends_with(".json") {
            Format::Json
        } else {
            Format::Yaml
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawDocument {
    api_version: Option<Value>,
    #[serde(default)]
    schema: Option<Vec<RawObject>>,
    #[serde(default)]
    sla_properties: Option<Vec<RawSla>>,
    sla_default_element: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawObject {
    name: Option<String>,
    physical_name: Option<String>,
    #[serde(default)]
    properties: Option<Vec<RawProperty>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawProperty {
    name: Option<String>,
    logical_type: Option<String>,
    physical_type: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSla {
    property: Option<String>,
    value: Option<Value>,
    unit: Option<String>,
    element: Option<String>,
}

/// One property of a schema object, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// Its name.
    pub name: String,
    /// Its `logicalType`, if any.
    pub logical_type: Option<String>,
    /// Its `physicalType`, if any.
    pub physical_type: Option<String>,
}

/// One schema object (a table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaObject {
    /// Its `name`.
    pub name: String,
    /// Its `physicalName`, if any.
    pub physical_name: Option<String>,
    /// Its properties in declared order.
    pub properties: Vec<Property>,
}

impl SchemaObject {
    /// The table a store holds it as: its `physicalName`, else its `name`.
    pub fn table(&self) -> &str {
        self.physical_name.as_deref().unwrap_or(&self.name)
    }

    fn is_named(&self, name: &str) -> bool {
        self.name == name || self.physical_name.as_deref() == Some(name)
    }
}

/// One entry of `slaProperties`, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct SlaProperty {
    /// Its position in `slaProperties`, for messages.
    pub index: usize,
    /// `property`, as written (`latency`, `frequency`…).
    pub property: String,
    /// `value`.
    pub value: Value,
    /// `unit`, if any.
    pub unit: Option<String>,
    /// `element`, or the deprecated `slaDefaultElement` when it has none.
    pub element: Option<String>,
}

/// An ODCS v3 document, as far as dogana reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    name: String,
    /// The schema objects, in order.
    pub schema: Vec<SchemaObject>,
    /// The service levels, in order.
    pub sla_properties: Vec<SlaProperty>,
}

/// Reads a document; `name` names it in messages (its path).
pub fn parse(text: &str, format: Format, name: &str) -> Result<Document, ColumnsError> {
    let raw: RawDocument = match format {
        Format::Json => serde_json::from_str(text).map_err(|e| e.to_string()),
        Format::Yaml => serde_norway::from_str(text).map_err(|e| e.to_string()),
    }
    .map_err(|e| {
        ColumnsError::Document(format!(
            "ODCS document {name} does not parse as {}: {e}; fix it (ODCS v3)",
            if format == Format::Json {
                "JSON"
            } else {
                "YAML"
            }
        ))
    })?;
    let version = match &raw.api_version {
        Some(Value::String(v)) => v.clone(),
        Some(other) => other.to_string(),
        None => {
            return Err(ColumnsError::Document(format!(
                "ODCS document {name} has no apiVersion; an ODCS v3 document starts with apiVersion: v3.0.2 (or a later v3)"
            )))
        }
    };
    if !version.starts_with("v3.") {
        return Err(ColumnsError::Document(format!(
            "ODCS document {name}: apiVersion {} is not ODCS v3; dogana reads v3 documents (schema objects with properties)",
            q(&version)
        )));
    }
    let mut schema = Vec::new();
    for (i, o) in raw.schema.unwrap_or_default().into_iter().enumerate() {
        let Some(object_name) = o.name else {
            return Err(ColumnsError::Document(format!(
                "ODCS document {name}: schema[{i}] has no name; name the schema object"
            )));
        };
        let mut properties = Vec::new();
        for (j, p) in o.properties.unwrap_or_default().into_iter().enumerate() {
            let Some(property_name) = p.name else {
                return Err(ColumnsError::Document(format!(
                    "ODCS document {name}: schema {}, properties[{j}] has no name; name the property",
                    q(&object_name)
                )));
            };
            properties.push(Property {
                name: property_name,
                logical_type: p.logical_type,
                physical_type: p.physical_type,
            });
        }
        schema.push(SchemaObject {
            name: object_name,
            physical_name: o.physical_name,
            properties,
        });
    }
    let mut sla_properties = Vec::new();
    for (i, s) in raw
        .sla_properties
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let Some(property) = s.property else {
            return Err(ColumnsError::Document(format!(
                "ODCS document {name}: slaProperties[{i}] has no property; name it (latency, frequency, retention…)"
            )));
        };
        let Some(value) = s.value else {
            return Err(ColumnsError::Document(format!(
                "ODCS document {name}: slaProperties[{i}] ({}) has no value",
                q(&property)
            )));
        };
        sla_properties.push(SlaProperty {
            index: i,
            property,
            value,
            unit: s.unit,
            element: s.element.or_else(|| raw.sla_default_element.clone()),
        });
    }
    Ok(Document {
        name: name.to_owned(),
        schema,
        sla_properties,
    })
}

impl Document {
    /// The document's name in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The schema object named `schema` (its `name` or `physicalName`).
    pub fn object(&self, schema: &str) -> Result<&SchemaObject, ColumnsError> {
        self.schema
            .iter()
            .find(|o| o.is_named(schema))
            .ok_or_else(|| {
                let names: Vec<String> = self.schema.iter().map(|o| q(&o.name)).collect();
                ColumnsError::NotFound(format!(
                    "ODCS document {} has no schema object {}; {}",
                    self.name,
                    q(schema),
                    if names.is_empty() {
                        "its schema lists none".to_owned()
                    } else {
                        format!("it has {}", names.join(", "))
                    }
                ))
            })
    }

    /// The columns of the schema object named `schema`, in declared order (CONTRACT-16).
    pub fn columns(&self, schema: &str) -> Result<Columns, ColumnsError> {
        let object = self.object(schema)?;
        let source = format!("ODCS document {}, schema {}", self.name, q(&object.name));
        let mut pairs = Vec::with_capacity(object.properties.len());
        for p in &object.properties {
            pairs.push((p.name.clone(), property_type(p, &source)?));
        }
        Columns::new(pairs, &source)
    }

    /// The schema objects an SLA's `element` names: each comma-separated part's object
    /// (`object.property` or `object`), or, in a document of one schema object, that one; an
    /// SLA without an element applies to every schema object.
    pub fn objects_of(&self, sla: &SlaProperty) -> Result<Vec<&SchemaObject>, ColumnsError> {
        let Some(element) = &sla.element else {
            return Ok(self.schema.iter().collect());
        };
        let mut objects: Vec<&SchemaObject> = Vec::new();
        for part in element.split(',').map(str::trim) {
            let head = part.split('.').next().unwrap_or(part);
            let found = match self.schema.iter().find(|o| o.is_named(head)) {
                Some(o) => o,
                None if self.schema.len() == 1 && !part.contains('.') => &self.schema[0],
                None => {
                    return Err(ColumnsError::NotFound(format!(
                        "ODCS document {}: slaProperties[{}] ({}) names element {}, and no schema object is named {}; write it as OBJECT.PROPERTY",
                        self.name,
                        sla.index,
                        q(&sla.property),
                        q(element),
                        q(head)
                    )))
                }
            };
            if !objects.iter().any(|o| std::ptr::eq(*o, found)) {
                objects.push(found);
            }
        }
        Ok(objects)
    }
}

/// The dogana type of one property (the rules of the module's documentation).
pub fn property_type(p: &Property, source: &str) -> Result<ColumnType, ColumnsError> {
    // the type at fault as written: the physical type where it decides, else the logical one
    let declared = p
        .physical_type
        .as_deref()
        .filter(|t| {
            matches!(
                sql_types::target(t),
                Some(Target::Decimal | Target::Datetime | Target::Date)
            )
        })
        .or(p.logical_type.as_deref())
        .or(p.physical_type.as_deref())
        .unwrap_or("");
    let unmapped = |why: String| {
        ColumnsError::unmapped(
            format!("{source}: property {}: {why}", q(&p.name)),
            &p.name,
            declared,
        )
    };
    if let Some(physical) = &p.physical_type {
        if matches!(
            sql_types::target(physical),
            Some(Target::Decimal | Target::Datetime | Target::Date)
        ) {
            return sql_types::column_type(physical)
                .map_err(|e| unmapped(format!("physicalType {}: {e}", q(physical))));
        }
    }
    let Some(logical) = &p.logical_type else {
        return Err(unmapped(match &p.physical_type {
            None => "it has no type; give it a logicalType (integer, number, string, boolean, date, timestamp)".to_owned(),
            Some(physical) => format!(
                "it has no logicalType, and its physicalType {} names no exact decimal, timestamp or date; give it a logicalType",
                q(physical)
            ),
        }));
    };
    match LOGICAL_TYPES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(logical))
    {
        Some((_, Some(t))) => Ok(*t),
        Some((name, None)) => Err(unmapped(format!(
            "logicalType {} has no dogana name ({}); a column is one of int, float, str, bool, date, datetime or decimal(p,s)",
            q(logical),
            if *name == "time" {
                "a time of day is not a date or an instant"
            } else {
                "a nested type; publish it flattened, or as a string"
            }
        ))),
        None => Err(unmapped(format!(
            "logicalType {} is not an ODCS logical type dogana maps (integer, number, string, boolean, date, timestamp)",
            q(logical)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prop(logical: Option<&str>, physical: Option<&str>) -> Property {
        Property {
            name: "c".into(),
            logical_type: logical.map(str::to_owned),
            physical_type: physical.map(str::to_owned),
        }
    }

    // rule: CONTRACT-19
    #[test]
    fn logical_types_map_case_by_case() {
        for (logical, want) in LOGICAL_TYPES {
            let got = property_type(&prop(Some(logical), None), "d");
            match want {
                Some(t) => assert_eq!(got, Ok(*t), "{logical}"),
                None => assert!(
                    matches!(&got, Err(ColumnsError::Unmapped { message: m, .. }) if m.contains("has no dogana name")),
                    "{logical}: {got:?}"
                ),
            }
        }
    }

    // rule: CONTRACT-19
    #[test]
    fn a_physical_type_decides_for_decimals_timestamps_and_dates_only() {
        let cases = [
            (
                Some("number"),
                Some("decimal(12,2)"),
                Ok(ColumnType::Decimal {
                    precision: 12,
                    scale: 2,
                }),
            ),
            (
                Some("number"),
                Some("NUMERIC(12,2)"),
                Ok(ColumnType::Decimal {
                    precision: 12,
                    scale: 2,
                }),
            ),
            (
                Some("string"),
                Some("timestamptz"),
                Ok(ColumnType::Datetime),
            ),
            (
                Some("timestamp"),
                Some("TIMESTAMP"),
                Ok(ColumnType::Datetime),
            ),
            (Some("string"), Some("date"), Ok(ColumnType::Date)),
            (
                None,
                Some("numeric(5,0)"),
                Ok(ColumnType::Decimal {
                    precision: 5,
                    scale: 0,
                }),
            ),
            // other physical types leave the decision to the logical type
            (Some("integer"), Some("varchar(10)"), Ok(ColumnType::Int)),
            (Some("number"), Some("double"), Ok(ColumnType::Float)),
            (Some("string"), Some("VARCHAR(18)"), Ok(ColumnType::Str)),
        ];
        for (logical, physical, want) in cases {
            assert_eq!(
                property_type(&prop(logical, physical), "d"),
                want,
                "{logical:?} {physical:?}"
            );
        }
    }

    // rule: CONTRACT-19
    #[test]
    fn what_does_not_map_is_refused_naming_the_property_and_its_type() {
        let refused =
            |logical: Option<&str>, physical: Option<&str>, says: &str| match property_type(
                &prop(logical, physical),
                "ODCS document x, schema \"t\"",
            ) {
                Err(ColumnsError::Unmapped { message: m, .. }) => {
                    assert!(
                        m.starts_with("ODCS document x, schema \"t\": property \"c\": "),
                        "{m}"
                    );
                    assert!(m.contains(says), "{m}");
                }
                other => panic!("{logical:?} {physical:?}: {other:?}"),
            };
        refused(None, None, "it has no type");
        refused(
            None,
            Some("bigint"),
            "it has no logicalType, and its physicalType \"bigint\"",
        );
        refused(
            Some("number"),
            Some("numeric"),
            "without precision and scale",
        );
        refused(
            Some("number"),
            Some("decimal(40,2)"),
            "its precision 40 is not between 1 and 38",
        );
        refused(Some("object"), None, "a nested type");
        refused(Some("array"), Some("ARRAY<STRING>"), "a nested type");
        refused(Some("time"), None, "a time of day");
        refused(
            Some("uuid"),
            None,
            "is not an ODCS logical type dogana maps",
        );
    }
}
