//! Integration tests of rageval-sources: the Elasticsearch retriever against a real
//! ES-compatible server (noida-db, installed by `scripts/setup-noida.sh`), the RAG-service
//! client against local HTTP servers, the local index on the kids-coding corpus of seed S4,
//! `collect` end to end, and the baseline RAG against the testkit's mock chat endpoint.

#![allow(clippy::unwrap_used)]

mod baseline;
mod collect;
mod collect_results;
mod documents;
mod elastic;
mod fixtures;
mod local_index;
mod noida;
mod service;
mod splitter;

/// A plain HTTP client for the tests' own requests (seeding the test server). reqwest is
/// built without a TLS crypto provider of its own (`rustls-no-provider`), so whichever test
/// runs first installs ring's, as the product's clients do; a test run alone used to panic.
pub fn test_client() -> reqwest::Client {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::new()
}
