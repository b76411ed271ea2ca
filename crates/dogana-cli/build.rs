//! With the `duckdb` feature, the binary finds DuckDB's shared library at run time: beside
//! itself (`$ORIGIN`, where scripts/build-full.sh copies it) or where it was linked from; every
//! test binary (the library's unit tests as well as `tests/`) where it was linked from.
fn main() {
    println!("cargo:rerun-if-env-changed=DUCKDB_LIB_DIR");
    if std::env::var_os("CARGO_FEATURE_DUCKDB").is_none() {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,-rpath,$ORIGIN");
    if let Some(dir) = std::env::var_os("DUCKDB_LIB_DIR") {
        let dir = std::path::PathBuf::from(dir);
        let dir = dir.canonicalize().unwrap_or(dir);
        // every linked target: the binary, `tests/`, and the library's unit-test binary,
        // which `rustc-link-arg-tests` does not reach
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
}
