//! Rank metrics (filled in by the rank-math work).
