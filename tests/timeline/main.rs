//! timeline tests (filled in by their issue).
