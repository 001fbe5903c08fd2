//! Client names compared fast, as the checkers' and maps' keys.
//!
//! A run's records name their clients thousands of times, each a clone
//! of one shared text, and the checkers key their maps by those names:
//! comparing them as text was a call to `memcmp` for every lookup (about
//! 340,000 an explored 1,000 seeds). Two clones of one name are the same
//! pointer, and two different names of a generated run (`A` to `D`)
//! differ in their first letter: either answers without the call. The
//! order is the text's, as before.

use std::cmp::Ordering;

/// `a` against `b` as text: the same text by address, or a first letter
/// that differs, answers without comparing the rest.
pub(crate) fn cmp_name(a: &str, b: &str) -> Ordering {
    if std::ptr::eq(a, b) {
        return Ordering::Equal;
    }
    match a.as_bytes().first().cmp(&b.as_bytes().first()) {
        Ordering::Equal => a.cmp(b),
        first => first,
    }
}

/// Whether `a` and `b` are the same text (the same shared text first).
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    std::ptr::eq(a, b) || a == b
}

/// A client's name as a key: ordered as its text, by [`cmp_name`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Name<'h>(pub(crate) &'h str);

impl PartialEq for Name<'_> {
    fn eq(&self, other: &Self) -> bool {
        same_name(self.0, other.0)
    }
}

impl Eq for Name<'_> {}

impl PartialOrd for Name<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_name(self.0, other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The fast order is the text's order, shared or not.
        #[test]
        fn orders_as_text(a in "[A-D]{0,3}", b in "[A-D]{0,3}") {
            prop_assert_eq!(cmp_name(&a, &b), a.cmp(&b));
            let shared: std::sync::Arc<str> = a.as_str().into();
            let again = shared.clone();
            prop_assert_eq!(cmp_name(&shared, &again), Ordering::Equal);
            prop_assert_eq!(Name(&a) == Name(&b), a == b);
            prop_assert!(same_name(&shared, &again) && same_name(&a, &a.clone()));
        }
    }
}
