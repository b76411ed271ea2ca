//! dogana-rows
