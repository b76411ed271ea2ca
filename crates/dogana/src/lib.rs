//! dogana
