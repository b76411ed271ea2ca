//! The schema lattice (`schema-lattice-has`, `binary-fixed-size`, `struct-list-map`,
//! `variant-column-keeps`): the one place a column's type may change between writes.
//!
//! Every write reconciles each arriving column's type with the type the table's stored
//! schema holds for it ([`join`]), before any Parquet is written. The lattice has one
//! promotion, `int` with `float` to `float` (Int64 with Float64 to Float64, read back from
//! physically mixed parts with no per-column cast), and `json` absorbs `str`; a key column
//! takes no promotion ([`Conflict::KeyWidened`]). Binary, fixed-size binary and fixed-size
//! float vectors take none either; structs gain fields, lists and maps reconcile item by item;
//! a variant column absorbs the scalar kinds it keeps. Any other pair is
//! [`Conflict::Incompatible`], naming the column path, the stored and the arriving type.
//!
//! Types are written as dogana's type names where dogana has one (`int`, `float`, `str`,
//! `bool`, `date`, `datetime`, `decimal(p,s)`), and otherwise `json`, `binary`,
//! `fixed_size_binary(n)`, `vector(n,f32)`, `vector(n,f16)`, `struct<a:T,b:T>`, `list<T>`,
//! `map<str,T>` and `variant`.

use std::fmt;

/// One type of the lattice.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LakeType {
    /// Int64 (`int`).
    Int,
    /// Float64 (`float`).
    Float,
    /// Utf8 (`str`, or an untyped column).
    Str,
    /// JSON text (`json`): absorbs `str`.
    Json,
    /// Boolean (`bool`).
    Bool,
    /// Date32 (`date`).
    Date,
    /// Timestamp(µs, UTC) (`datetime`).
    Datetime,
    /// An exact decimal, stored as its text (`decimal(p,s)`, as declared).
    Decimal(String),
    /// Binary (`binary`).
    Binary,
    /// FixedSizeBinary(n) (`fixed_size_binary(n)`).
    FixedBinary(u32),
    /// A dimension-n FixedSizeList of Float32 (`vector(n,f32)`) or Float16 (`vector(n,f16)`).
    Vector {
        /// Its dimension.
        dim: u32,
        /// Float16 elements.
        half: bool,
    },
    /// A struct of named fields, in order (`struct<a:T,…>`).
    Struct(Vec<(String, LakeType)>),
    /// A list of items (`list<T>`).
    List(Box<LakeType>),
    /// A map of text keys to values (`map<str,T>`).
    Map(Box<LakeType>),
    /// A variant: each value keeps its scalar kind (`variant`).
    Variant,
}

/// Why two types do not join.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conflict {
    /// A key column would take the Float64 promotion (`store.reconcile.key-widening`).
    KeyWidened {
        /// The column path.
        path: String,
        /// The stored type.
        stored: String,
        /// The arriving type.
        arriving: String,
    },
    /// A pair outside the lattice (`store.reconcile.incompatible`).
    Incompatible {
        /// The column path (`a.b` for a struct field, `a[]` for a list item, `a{}` for a map
        /// value).
        path: String,
        /// The stored type.
        stored: String,
        /// The arriving type.
        arriving: String,
    },
}

impl LakeType {
    /// The type a column's declared type name names (None: an untyped column, `str`); None
    /// when the name is not one of the lattice's.
    pub fn of_declared(ty: Option<&str>) -> Option<LakeType> {
        match ty {
            None => Some(LakeType::Str),
            Some(t) => LakeType::parse(t),
        }
    }

    /// Parses a type name (see the module's list).
    pub fn parse(s: &str) -> Option<LakeType> {
        let mut p = Parser {
            s: s.as_bytes(),
            at: 0,
        };
        let t = p.ty()?;
        p.ws();
        (p.at == p.s.len()).then_some(t)
    }

    /// Whether values of this type take the one promotion.
    fn numeric(&self) -> bool {
        matches!(self, LakeType::Int | LakeType::Float)
    }

    /// Whether a variant column absorbs a column of this type (its scalar kinds).
    fn variant_scalar(&self) -> bool {
        matches!(
            self,
            LakeType::Str | LakeType::Int | LakeType::Float | LakeType::Bool | LakeType::Binary
        )
    }
}

impl fmt::Display for LakeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LakeType::Int => f.write_str("int"),
            LakeType::Float => f.write_str("float"),
            LakeType::Str => f.write_str("str"),
            LakeType::Json => f.write_str("json"),
            LakeType::Bool => f.write_str("bool"),
            LakeType::Date => f.write_str("date"),
            LakeType::Datetime => f.write_str("datetime"),
            LakeType::Decimal(d) => f.write_str(d),
            LakeType::Binary => f.write_str("binary"),
            LakeType::FixedBinary(n) => write!(f, "fixed_size_binary({n})"),
            LakeType::Vector { dim, half } => {
                write!(f, "vector({dim},{})", if *half { "f16" } else { "f32" })
            }
            LakeType::Struct(fields) => {
                f.write_str("struct<")?;
                for (i, (n, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{n}:{t}")?;
                }
                f.write_str(">")
            }
            LakeType::List(t) => write!(f, "list<{t}>"),
            LakeType::Map(t) => write!(f, "map<str,{t}>"),
            LakeType::Variant => f.write_str("variant"),
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.s.get(self.at) == Some(&c)).then(|| self.at += 1)
    }

    fn word(&mut self) -> Option<&str> {
        self.ws();
        let start = self.at;
        while self
            .s
            .get(self.at)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            self.at += 1;
        }
        (self.at > start).then(|| std::str::from_utf8(&self.s[start..self.at]).ok())?
    }

    fn number(&mut self) -> Option<u32> {
        let w = self.word()?;
        w.parse().ok().filter(|n| *n > 0)
    }

    fn ty(&mut self) -> Option<LakeType> {
        let start = self.at;
        let w = self.word()?.to_ascii_lowercase();
        Some(match w.as_str() {
            "int" => LakeType::Int,
            "float" => LakeType::Float,
            "str" => LakeType::Str,
            "json" => LakeType::Json,
            "bool" => LakeType::Bool,
            "date" => LakeType::Date,
            "datetime" => LakeType::Datetime,
            "binary" => LakeType::Binary,
            "variant" => LakeType::Variant,
            "decimal" => {
                self.eat(b'(')?;
                self.number()?;
                self.eat(b',')?;
                self.word()?.parse::<u32>().ok()?;
                self.eat(b')')?;
                let text = std::str::from_utf8(&self.s[start..self.at]).ok()?;
                LakeType::Decimal(text.trim().to_owned())
            }
            "fixed_size_binary" => {
                self.eat(b'(')?;
                let n = self.number()?;
                self.eat(b')')?;
                LakeType::FixedBinary(n)
            }
            "vector" => {
                self.eat(b'(')?;
                let dim = self.number()?;
                self.eat(b',')?;
                let half = match self.word()? {
                    "f32" => false,
                    "f16" => true,
                    _ => return None,
                };
                self.eat(b')')?;
                LakeType::Vector { dim, half }
            }
            "list" => {
                self.eat(b'<')?;
                let t = self.ty()?;
                self.eat(b'>')?;
                LakeType::List(Box::new(t))
            }
            "map" => {
                self.eat(b'<')?;
                if self.word()? != "str" {
                    return None;
                }
                self.eat(b',')?;
                let t = self.ty()?;
                self.eat(b'>')?;
                LakeType::Map(Box::new(t))
            }
            "struct" => {
                self.eat(b'<')?;
                let mut fields: Vec<(String, LakeType)> = Vec::new();
                loop {
                    let name = self.word()?.to_owned();
                    self.eat(b':')?;
                    let t = self.ty()?;
                    if fields.iter().any(|(n, _)| *n == name) {
                        return None;
                    }
                    fields.push((name, t));
                    if self.eat(b',').is_none() {
                        break;
                    }
                }
                self.eat(b'>')?;
                LakeType::Struct(canonical_fields(fields))
            }
            _ => return None,
        })
    }
}

/// Joins the stored type of the column at `path` with an arriving one: the type both read
/// as, or why none exists. `key`: the column is part of the table's key, so it takes no
/// promotion (`store.reconcile.key-widening`). The join is a partial operation: commutative,
/// a type joined with itself is itself, and associative wherever both groupings join (a
/// variant absorbs `int` and `str` though `int` with `str` is incompatible, so
/// `(int ∨ str) ∨ variant` is refused where `int ∨ (str ∨ variant)` is `variant`).
pub fn join(
    path: &str,
    stored: &LakeType,
    arriving: &LakeType,
    key: bool,
) -> Result<LakeType, Conflict> {
    let incompatible = || Conflict::Incompatible {
        path: path.to_owned(),
        stored: stored.to_string(),
        arriving: arriving.to_string(),
    };
    if stored == arriving {
        return Ok(stored.clone());
    }
    if key {
        // rule: store.reconcile.key-widening — a key takes no promotion: a pair that would
        // join is a widening, any other pair stays incompatible
        return match join(path, stored, arriving, false) {
            // json absorbing str keeps a key what it was
            Ok(j) if j == *stored && !(stored.numeric() && arriving.numeric()) => Ok(j),
            Ok(_) => Err(Conflict::KeyWidened {
                path: path.to_owned(),
                stored: stored.to_string(),
                arriving: arriving.to_string(),
            }),
            Err(e) => Err(e),
        };
    }
    use LakeType as T;
    match (stored, arriving) {
        // rule: store.reconcile.lattice — the one promotion
        (a, b) if a.numeric() && b.numeric() => Ok(T::Float),
        // a JSON type absorbs Utf8
        (T::Json, T::Str) | (T::Str, T::Json) => Ok(T::Json),
        // rule: store.reconcile.variant — a variant keeps each scalar's kind
        (T::Variant, t) | (t, T::Variant) if t.variant_scalar() => Ok(T::Variant),
        // rule: store.reconcile.nested-lattice — structs gain fields
        (T::Struct(a), T::Struct(b)) => {
            let mut fields: Vec<(String, LakeType)> = Vec::with_capacity(a.len() + b.len());
            for (n, ta) in a {
                let t = match b.iter().find(|(m, _)| m == n) {
                    Some((_, tb)) => join(&format!("{path}.{n}"), ta, tb, false)?,
                    None => ta.clone(),
                };
                fields.push((n.clone(), t));
            }
            for (n, tb) in b {
                if !a.iter().any(|(m, _)| m == n) {
                    fields.push((n.clone(), tb.clone()));
                }
            }
            Ok(T::Struct(canonical_fields(fields)))
        }
        (T::List(a), T::List(b)) => Ok(T::List(Box::new(join(&format!("{path}[]"), a, b, false)?))),
        (T::Map(a), T::Map(b)) => Ok(T::Map(Box::new(join(&format!("{path}{{}}"), a, b, false)?))),
        // rule: store.reconcile.binary-and-vector, store.reconcile.incompatible — no other
        // pair joins: binary, fixed-size binary and vectors take no promotion, a width or
        // dimension change, a kind change (scalar against nested, list against map) neither
        _ => Err(incompatible()),
    }
}

/// A struct's fields in name order: a struct type is then one value whatever order its
/// writer named its fields in.
fn canonical_fields(mut fields: Vec<(String, LakeType)>) -> Vec<(String, LakeType)> {
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> LakeType {
        LakeType::parse(s).unwrap_or_else(|| panic!("{s} parses"))
    }

    #[test]
    fn names_round_trip() {
        for s in [
            "int",
            "float",
            "str",
            "json",
            "bool",
            "date",
            "datetime",
            "decimal(12,2)",
            "binary",
            "fixed_size_binary(16)",
            "vector(768,f16)",
            "vector(3,f32)",
            "struct<a:int,b:list<str>>",
            "map<str,struct<x:float>>",
            "variant",
        ] {
            assert_eq!(t(s).to_string(), s);
        }
        for bad in [
            "",
            "integer",
            "vector(0,f32)",
            "map<int,int>",
            "struct<a:int,a:str>",
            "list<int",
        ] {
            assert_eq!(LakeType::parse(bad), None, "{bad:?}");
        }
    }
}
