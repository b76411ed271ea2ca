//! dogana-json
