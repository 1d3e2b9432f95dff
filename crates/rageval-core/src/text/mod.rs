//! Text metrics (filled in by the text work).
