//! With the `duckdb` feature, the extension module finds DuckDB's shared library when Python
//! imports it: first in the `libs` folder of the `dogana_rs` package (`$ORIGIN/libs`), where
//! scripts/test-python.sh and python/README.md's install step copy `libduckdb.so` so that
//! the wheel carries it (a folder without `__init__.py`: in the package itself the library
//! would look like a module); then where it was linked from (`DUCKDB_LIB_DIR`,
//! .deps/libduckdb). See docs/decisions.md ("Python").
fn main() {
    println!("cargo:rerun-if-env-changed=DUCKDB_LIB_DIR");
    if std::env::var_os("CARGO_FEATURE_DUCKDB").is_none() {
        return;
    }
    println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,$ORIGIN/libs");
    if let Some(dir) = std::env::var_os("DUCKDB_LIB_DIR") {
        let dir = std::path::PathBuf::from(dir);
        let dir = dir.canonicalize().unwrap_or(dir);
        println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,{}", dir.display());
    }
}
