//! Model-based testing of `StreamStore` implementations: a reference model (`reference`) and
//! a harness (`harness`) that applies the same operations to the model and to any store and
//! compares every answer and the state after each step.

pub mod harness;
pub mod reference;
