//! Runs a source on its own thread and sends snapshots over a channel.
