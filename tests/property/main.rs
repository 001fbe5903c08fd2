//! property tests (filled in by their issue).
