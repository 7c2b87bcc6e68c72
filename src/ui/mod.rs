//! The terminal dashboard.
