//! The `rageval` command as a library, so the Python package's `rageval` command runs the
//! same code as the binary: [`run`] takes the arguments and returns the exit code. Every
//! command's work is done by the library crates (`rageval-run` for the judged commands);
//! this crate only wires them together, and only [`run`] turns an outcome into an exit code.
//!
//! # Features
//!
//! The embedded model backends of `rageval-judge`, forwarded; every command exists in every
//! build. A backend a build lacks is refused with exit 2, naming the feature and the
//! `cargo build` command that adds it.
//!
//! | feature | default | brings | costs |
//! |---|---|---|---|
//! | `minilm` | yes | the offline embeddings: all-MiniLM-L6-v2 and multilingual-e5-small (answer relevance and semantic similarity without an endpoint, `index --embed-model minilm\|e5`) | candle and tokenizers, pure Rust: about two minutes of a cold build on two cores, shared with `checker` |
//! | `checker` | yes | `--judge checker:DIR`: checker models a team brings (ModernBERT, DeBERTa-v2, XLM-RoBERTa, T5) | the same candle stack |
//! | `gguf` | no | `--judge gguf:PATH`: a GGUF chat model run in-process by llama.cpp | a C++ build that needs cmake and libclang (`./scripts/setup.sh --with-gguf` installs them), the largest unit of a cold build: about four minutes on two cores. A llama.cpp *server* needs none of it: it is an OpenAI-compatible endpoint (`--judge-base-url`) |

mod app;
mod cli;
mod commands;
mod judge;
mod signals;
mod ui;

pub use app::run;
