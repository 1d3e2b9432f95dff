//! Integration tests of rageval-tasks: every task's LLM path over the mock server (typed
//! answers, garbage, pack choice, fencing against injection), the router, the heuristic
//! judge's reasons, and its measured agreement on WikiEval.

mod fencing;
mod heuristic;
mod llm;
mod router;
mod support;
mod wikieval;
