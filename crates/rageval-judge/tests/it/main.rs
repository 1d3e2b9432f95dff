//! Integration tests of the judge pipeline against the in-process mock server
//! (`rageval-testkit`), over real HTTP on 127.0.0.1.

mod cancel;
mod caps;
mod dedupe;
mod faults;
mod pipeline;
mod pool;
mod secrets;
mod support;
mod throughput;
