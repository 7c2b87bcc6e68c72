//! One-shot output of a snapshot.
