//! regression tests (filled in by their issue).
