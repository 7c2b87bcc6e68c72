//! Host readings from /proc.
