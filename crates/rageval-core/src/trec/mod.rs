//! trec_eval-compatible evaluation (filled in by the trec work).
