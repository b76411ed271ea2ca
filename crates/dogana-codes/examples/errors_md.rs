//! Prints docs/errors.md: `cargo run -q -p dogana-codes --example errors_md > docs/errors.md`.
fn main() {
    print!("{}", dogana_codes::markdown());
}
