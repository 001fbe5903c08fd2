//! [`Allocator`]: mimalloc, asked for plain blocks where they are aligned
//! enough.
//!
//! The `mimalloc` crate's global allocator asks for every block through
//! `mi_malloc_aligned`, even with the word alignment nearly every Rust
//! value has. mimalloc 3 takes such a request from the free list of its
//! size while the list lasts, but once the list has run dry it goes the
//! plain way only for a power-of-two block size: a 24- or 48-byte value
//! goes down the over-allocating path instead (a 48-byte value in a
//! 64-byte block, about 190 instructions), 62,000 times over an explored
//! 1,000 seeds. Every mimalloc block is aligned to at least a
//! word (its sizes are multiples of 8 and a page's first block is
//! 16-aligned), so a request for at most that takes `mi_malloc`, as the
//! system allocator takes `malloc` below `malloc`'s own alignment.
//! (Upstream: mimalloc_rust pull request #170, open.)
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as ffi;

/// The alignment every mimalloc block has (`MI_INTPTR_SIZE`).
const WORD: usize = std::mem::size_of::<usize>();

/// mimalloc as the global allocator, through its plain calls where the
/// alignment allows. Binaries install it with `#[global_allocator]`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Allocator;

// SAFETY: every call is mimalloc's own; a pointer goes back to mimalloc
// (`mi_free` takes plain and aligned blocks alike), and a plain call is
// made only for an alignment every mimalloc block meets.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe { block(layout, ffi::mi_malloc, ffi::mi_malloc_aligned) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe { block(layout, ffi::mi_zalloc, ffi::mi_zalloc_aligned) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator, so from mimalloc.
        unsafe { ffi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: see the impl; the block keeps its alignment.
        unsafe {
            if layout.align() <= WORD {
                ffi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                ffi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

/// A new block for `layout`: from `plain` when its alignment is one every
/// block has, else from `aligned` (either zeroing it or not).
///
/// # Safety
///
/// `layout` has a non-zero size; `plain` and `aligned` are mimalloc's.
#[inline(always)]
unsafe fn block(
    layout: Layout,
    plain: unsafe extern "C" fn(usize) -> *mut c_void,
    aligned: unsafe extern "C" fn(usize, usize) -> *mut c_void,
) -> *mut u8 {
    // SAFETY: mimalloc's calls, for a non-zero size.
    unsafe {
        if layout.align() <= WORD {
            plain(layout.size()).cast()
        } else {
            aligned(layout.size(), layout.align()).cast()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block meets its layout's alignment, whichever call served
    /// it: many sizes (power of two or not, so both of mimalloc's paths
    /// run, and enough of each to drain a free list) at every alignment
    /// up to a page; zeroed blocks are zero, a grown or shrunk block keeps
    /// its bytes and its alignment.
    #[test]
    fn blocks_meet_their_alignment() {
        let a = Allocator;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in (1..=200).chain([255, 256, 257, 1000, 4096, 70_000]) {
                let layout = Layout::from_size_align(size, align).expect("a layout");
                let mut blocks = Vec::new();
                for i in 0..40u8 {
                    // SAFETY: a non-zero size; each block is freed below.
                    unsafe {
                        let p = if i % 2 == 0 {
                            a.alloc(layout)
                        } else {
                            a.alloc_zeroed(layout)
                        };
                        assert!(
                            !p.is_null() && (p as usize).is_multiple_of(align),
                            "{size}/{align}"
                        );
                        if i % 2 == 1 {
                            assert!(std::slice::from_raw_parts(p, size).iter().all(|&b| b == 0));
                        }
                        std::ptr::write_bytes(p, i, size);
                        blocks.push((p, i));
                    }
                }
                for (p, i) in blocks {
                    let new_size = if i % 3 == 0 {
                        size * 2 + 8
                    } else {
                        size.div_ceil(2)
                    };
                    // SAFETY: `p` is a live block of `layout`, freed once.
                    unsafe {
                        let q = a.realloc(p, layout, new_size);
                        assert!(
                            !q.is_null() && (q as usize).is_multiple_of(align),
                            "{size}/{align} realloc"
                        );
                        let kept = size.min(new_size);
                        assert!(std::slice::from_raw_parts(q, kept).iter().all(|&b| b == i));
                        let grown = Layout::from_size_align(new_size, align).expect("a layout");
                        a.dealloc(q, grown);
                    }
                }
            }
        }
    }
}
