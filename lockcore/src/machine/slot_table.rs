//! [`SlotTable`]: the order in which a 3.44+ renewal round walks its
//! slots in cluster mode.
//!
//! `RenewalTask.slot2names` is a `ConcurrentHashMap<Integer, Set<String>>`
//! and `renewSlots` walks `slot2names.values()`: bin by bin, slot `s` in
//! bin `s & (length - 1)`. The table is made with 16 bins at the first
//! slot and doubles once it holds three quarters of its length
//! (`sizeCtl`); it never shrinks. Two slots share a bin only when they
//! differ by a multiple of the length; the lower goes first here (the
//! map's own order there is the order they came in, or a resize's split).

/// The length of one task's `slot2names` table (0 before its first slot).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct SlotTable(u16);

impl SlotTable {
    /// The map now holds `slots` distinct slots.
    pub(super) fn hold(&mut self, slots: usize) {
        if slots == 0 {
            return;
        }
        let mut length = usize::from(self.0).max(16);
        while slots >= length / 4 * 3 && length < 1 << 14 {
            length *= 2;
        }
        self.0 = length as u16;
    }

    /// Where a round visits `slot`: sort by it.
    pub(super) fn place(self, slot: u16) -> (u16, u16) {
        (slot & self.0.max(1).wrapping_sub(1), slot)
    }
}

#[cfg(test)]
mod tests {
    use super::SlotTable;

    /// 16 bins for up to 11 slots: 16 is bin 0, 3 bin 3, 5061 bin 5,
    /// 12182 bin 6; at 12 slots, 32 bins.
    #[test]
    fn slots_go_in_bin_order_and_the_table_grows_at_three_quarters() {
        let mut table = SlotTable::default();
        table.hold(2);
        let mut slots = vec![12182u16, 5061, 16, 3];
        slots.sort_by_key(|&s| table.place(s));
        assert_eq!(slots, [16, 3, 5061, 12182]);
        table.hold(11);
        assert_eq!(table, SlotTable(16));
        table.hold(12);
        assert_eq!(table, SlotTable(32));
        // It never shrinks.
        table.hold(1);
        assert_eq!(table, SlotTable(32));
        slots.sort_by_key(|&s| table.place(s));
        // 5061 & 31 = 5, 12182 & 31 = 22, 16 is bin 16.
        assert_eq!(slots, [3, 5061, 16, 12182]);
    }
}
