//! Finds DuckDB's shared library (DUCKDB_LIB_DIR, set by .cargo/config.toml to .deps/libduckdb)
//! and lets this crate's test binaries find it at run time (rpath).
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=DUCKDB_LIB_DIR");
    let dir = std::env::var("DUCKDB_LIB_DIR")
        .map(PathBuf::from)
        .unwrap_or_default();
    if !dir.join("libduckdb.so").is_file() {
        panic!(
            "dogana-duckdb links DuckDB's shared library, and {} has no libduckdb.so: run `bash scripts/libduckdb.sh` first (it fetches DuckDB 1.5.6's library from the npm registry), or set DUCKDB_LIB_DIR",
            dir.display()
        );
    }
    let dir = dir.canonicalize().unwrap_or(dir);
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
}
