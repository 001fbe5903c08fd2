//! Cross-crate tests for locksim live in the `[[test]]` binaries of this package; this library is empty.
