//! Model-based testing of `StreamStore` implementations: a reference model (`reference`) and
//! a harness (`harness`) that applies the same operations to the model and to any store and
//! compares every answer and the state after each step; `crash` adds syncs and simulated
//! crashes for stores that persist.
// Each test binary uses part of the shared harness.
#![allow(dead_code)]

pub mod crash;
pub mod harness;
pub mod reference;

/// Proptest cases per property: `default`, or `NATRIUM_PROPTEST_CASES` for long runs.
pub fn cases(default: u32) -> u32 {
    std::env::var("NATRIUM_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
