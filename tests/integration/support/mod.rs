//! Shared test harnesses.

pub mod tmux;
