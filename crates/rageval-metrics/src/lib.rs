//! Metrics over samples.
