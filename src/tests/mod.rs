//! Tests across the front-ends: the same money, printed by each of them.
mod money;
