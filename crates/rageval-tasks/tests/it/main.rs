//! Integration tests of rageval-tasks: every task's LLM path over the mock server (typed
//! answers, garbage, pack choice, fencing against injection), the router, the heuristic
//! judge's reasons, its measured agreement on WikiEval, and every task's schema through the
//! embedded GGUF model.

mod fencing;
mod gguf;
mod heuristic;
mod llm;
mod router;
mod support;
mod wikieval;
