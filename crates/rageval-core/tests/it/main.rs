//! Integration tests of `rageval-core` against files on disk and reference implementations:
//! one test binary, one module per concern.

mod calibration_simulation;
mod columnar;
mod conversations;
mod datasets;
mod rank_reference;
mod sample_round_trip;
mod text_reference;
mod traces;
mod trec_fixtures;
