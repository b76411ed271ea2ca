//! dogana-sqlite
