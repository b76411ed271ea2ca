//! `dogana`: the command line of the dogana protocol. Everything is in the library
//! (`src/lib.rs`); see its documentation for what the commands do and their exit statuses.

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    dogana_cli::run()
}
