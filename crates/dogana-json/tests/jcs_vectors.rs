//! RFC 8785 test vectors, kept in the repository under `tests/vectors/jcs` (their source and
//! licence are in its README.md): the tests read nothing outside the repository.

use std::fs;
use std::path::{Path, PathBuf};

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/jcs")
}

fn parse_hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16).expect("hex byte"))
        .collect()
}

/// One vector: its name, input bytes, expected output bytes and outhex bytes.
struct Vector {
    name: String,
    input: Vec<u8>,
    output: Vec<u8>,
    hex: Vec<u8>,
}

fn vectors() -> Vec<Vector> {
    let dir = vectors_dir();
    let mut names: Vec<String> = fs::read_dir(dir.join("input"))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.join("input").display()))
        .map(|entry| {
            entry
                .expect("dir entry")
                .file_name()
                .into_string()
                .expect("name")
        })
        .filter(|name| name.ends_with(".json"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let stem = name.trim_end_matches(".json").to_string();
            let read = |p: PathBuf| fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let input = read(dir.join("input").join(&name));
            let output = read(dir.join("output").join(&name));
            let hex = read(dir.join("outhex").join(format!("{stem}.txt")));
            let hex = parse_hex(std::str::from_utf8(&hex).expect("hex file is text"));
            Vector {
                name: stem,
                input,
                output,
                hex,
            }
        })
        .collect()
}

// rule: WIRE-18, WIRE-22, WIRE-23 (RFC 8785 output, byte for byte)
#[test]
fn every_vector_canonicalizes_to_its_output() {
    let vectors = vectors();
    assert!(
        vectors.len() >= 6,
        "expected the six RFC 8785 vectors, found {}",
        vectors.len()
    );
    for Vector {
        name,
        input,
        output,
        ..
    } in &vectors
    {
        let value = dogana_json::parse(input).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = dogana_json::jcs_checked(&value).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(output),
            "vector {name}"
        );
        assert_eq!(&got, output, "vector {name} (bytes)");
    }
}

// rule: WIRE-18 (RFC 8785 output; the hex files agree with the output files)
#[test]
fn every_vector_matches_its_hex() {
    for Vector {
        name,
        input,
        output,
        hex,
    } in vectors()
    {
        assert_eq!(
            hex, output,
            "outhex/{name}.txt differs from output/{name}.json"
        );
        let value = dogana_json::parse(&input).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            dogana_json::jcs(&value),
            hex,
            "vector {name} against outhex"
        );
    }
}

// rule: WIRE-18 (JCS is idempotent: canonical bytes canonicalize to themselves)
#[test]
fn every_output_is_a_fixed_point() {
    for Vector { name, output, .. } in vectors() {
        let value = dogana_json::parse(&output).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(dogana_json::jcs(&value), output, "vector {name}");
    }
}
