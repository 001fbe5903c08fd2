//! determinism tests (filled in by their issue).
