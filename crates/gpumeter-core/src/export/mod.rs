//! One-shot output of a snapshot: `gpumeter snapshot` prints a readable table ([`table`]) or the
//! versioned JSON schema ([`json`]). Reads the model only; knows nothing of terminals or sources.

pub mod json;
pub mod table;
