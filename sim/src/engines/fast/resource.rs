//! The resource each lock protects: where a holder's writes land, and
//! what a fencing token guards.

use std::collections::BTreeMap;

use lockcore::LockName;

/// The resources behind the locks, as every engine keeps them: each
/// remembers the highest fencing token it accepted.
#[derive(Debug, Default)]
pub(crate) struct Resources {
    highest: BTreeMap<LockName, u64>,
}

impl Resources {
    /// A write to `lock`'s resource carrying `token`; whether the resource
    /// takes it. A token below the highest accepted is refused (the writer
    /// is a holder that lost the lock to a later one); a write without a
    /// token is always taken (nothing can tell it is late).
    pub(crate) fn write(&mut self, lock: &LockName, token: Option<u64>) -> bool {
        let Some(token) = token else {
            return true;
        };
        let highest = self.highest.entry(lock.clone()).or_insert(0);
        if token < *highest {
            return false;
        }
        *highest = token;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A late holder's lower token is refused; the same or a higher one,
    /// and a write without a token, are taken; each lock has its own.
    #[test]
    fn refuses_tokens_below_the_highest_accepted() {
        let (a, b) = (LockName::new("a").unwrap(), LockName::new("b").unwrap());
        let mut r = Resources::default();
        assert!(r.write(&a, Some(5)));
        assert!(!r.write(&a, Some(4)));
        assert!(r.write(&a, Some(5)));
        assert!(r.write(&a, None));
        assert!(r.write(&b, Some(1)));
        assert!(r.write(&a, Some(6)));
        assert!(!r.write(&a, Some(5)));
    }
}
