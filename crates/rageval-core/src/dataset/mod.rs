//! Dataset readers (filled in by the dataset work).
