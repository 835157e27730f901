//! The global allocator: talc, with a free list per small size in front of it.
//!
//! A turn allocates and frees a few dozen small blocks (ids, records, queue slots, boxed
//! futures); talc coalesces each freed block with its neighbours and re-bins it, which was about
//! a tenth of a turn in the profile. A freed block of at most [`LARGEST`] bytes goes on the list
//! of its size class instead, and the next allocation of that class takes it back without
//! touching talc. The lists never shrink: they hold at most the peak of each class, which a
//! steady workload reaches and stays at.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::ptr::null_mut;

/// Size classes are multiples of this, which is also the largest alignment they serve.
const GRAIN: usize = 8;
/// The largest block a class holds; anything larger goes to talc alone.
const LARGEST: usize = 128;
const CLASSES: usize = LARGEST / GRAIN;

#[global_allocator]
static ALLOCATOR: CachedTalc = CachedTalc::new();

struct CachedTalc {
    talc: talc::wasm::WasmDynamicTalc,
    /// The head of each class's list; a free block's first word points at the next one.
    free: UnsafeCell<[*mut u8; CLASSES]>,
}

// SAFETY: compiled only for single-threaded wasm (no `atomics`), where nothing else can touch
// the lists while an allocator call runs; talc's own cell makes the same assumption.
unsafe impl Sync for CachedTalc {}

impl CachedTalc {
    const fn new() -> Self {
        CachedTalc {
            talc: talc::wasm::new_wasm_dynamic_allocator(),
            free: UnsafeCell::new([null_mut(); CLASSES]),
        }
    }
}

/// The class of a layout the lists serve; its blocks are `(class + 1) * GRAIN` bytes.
fn class_of(layout: Layout) -> Option<usize> {
    let size = layout.size();
    if size > LARGEST || layout.align() > GRAIN {
        return None;
    }
    // A zero size never reaches a global allocator; `max` keeps the arithmetic whole anyway.
    Some(size.max(1).div_ceil(GRAIN) - 1)
}

unsafe impl GlobalAlloc for CachedTalc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(class) = class_of(layout) else {
            return self.talc.alloc(layout);
        };
        // SAFETY: single-threaded (see `Sync`); the class is below `CLASSES` by `class_of`.
        let head = (*self.free.get()).as_mut_ptr().add(class);
        let taken = *head;
        if taken.is_null() {
            // SAFETY: the block size is a multiple of `GRAIN` (a power of two) of at most
            // `LARGEST`: a valid layout, and every block of the class has it.
            let block = Layout::from_size_align_unchecked((class + 1) * GRAIN, GRAIN);
            return self.talc.alloc(block);
        }
        *head = *taken.cast::<*mut u8>();
        taken
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let Some(class) = class_of(layout) else {
            return self.talc.dealloc(ptr, layout);
        };
        // SAFETY: the block is at least `GRAIN` bytes and `GRAIN`-aligned, room for the link.
        let head = (*self.free.get()).as_mut_ptr().add(class);
        *ptr.cast::<*mut u8>() = *head;
        *head = ptr;
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        match (class_of(layout), class_of(new_layout)) {
            (Some(old), Some(new)) if old == new => ptr,
            (None, None) => self.talc.realloc(ptr, layout, new_size),
            _ => {
                let moved = self.alloc(new_layout);
                if !moved.is_null() {
                    core::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                moved
            }
        }
    }
}
