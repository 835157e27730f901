//! The wasm build's allocator (`src/allocator.rs`: talc with a free list per small size class)
//! under random allocations, frees and resizes that cross its classes and talc's sizes: every
//! live block keeps its bytes and its alignment. Natively there is nothing to test.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::wasm_bindgen_test as test;

// Linked for its `#[global_allocator]`: a crate nothing names is not linked at all.
extern crate turnguard;

/// A small generator (xorshift), so the test needs no dependency and repeats exactly.
struct Random(u32);

impl Random {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0 as usize % bound
    }
}

/// A block's bytes: its own id in every byte, so a block written through another's link shows.
fn fill(id: usize, len: usize) -> Vec<u8> {
    vec![id as u8; len]
}

/// Every live block still holds its owner's id in every byte.
fn assert_intact(live: &[(usize, Vec<u8>)]) {
    for (owner, block) in live {
        assert!(
            block.iter().all(|&byte| byte == *owner as u8),
            "block {owner} was overwritten"
        );
    }
}

#[test]
fn blocks_keep_their_bytes_across_classes_and_resizes() {
    let mut random = Random(0x2545_f491);
    let mut live: Vec<(usize, Vec<u8>)> = Vec::new();
    for id in 0..40_000 {
        match random.below(4) {
            // New blocks mostly in the classes (up to 128 bytes), some beyond them.
            0 | 1 => {
                let len = if random.below(8) == 0 {
                    129 + random.below(400)
                } else {
                    random.below(129)
                };
                live.push((id, fill(id, len)));
            }
            2 if !live.is_empty() => {
                let at = random.below(live.len());
                live.swap_remove(at);
            }
            _ if !live.is_empty() => {
                // Grow or shrink in place of the allocation: `realloc` within a class, across
                // classes, and between a class and talc.
                let at = random.below(live.len());
                let (owner, block) = &mut live[at];
                let len = random.below(300);
                block.resize(len, *owner as u8);
                block.shrink_to_fit();
            }
            _ => {}
        }
        if id % 1000 == 0 {
            assert_intact(&live);
        }
    }
    assert_intact(&live);
}

#[test]
fn alignments_above_the_class_grain_are_kept() {
    #[repr(align(16))]
    struct Sixteen([u8; 16]);
    #[repr(align(64))]
    struct SixtyFour([u8; 8]);
    let mut boxes = Vec::new();
    for round in 0..200u8 {
        let sixteen = Box::new(Sixteen([round; 16]));
        let sixty_four = Box::new(SixtyFour([round; 8]));
        let eight = Box::new([u64::from(round); 3]);
        assert_eq!(&*sixteen as *const Sixteen as usize % 16, 0);
        assert_eq!(&*sixty_four as *const SixtyFour as usize % 64, 0);
        assert_eq!(&*eight as *const [u64; 3] as usize % 8, 0);
        if round % 3 == 0 {
            boxes.push((sixteen, sixty_four, eight));
        }
    }
    for (round, (sixteen, sixty_four, eight)) in boxes.iter().enumerate() {
        let expected = (round * 3) as u8;
        assert!(sixteen.0.iter().all(|&byte| byte == expected));
        assert!(sixty_four.0.iter().all(|&byte| byte == expected));
        assert!(eight.iter().all(|&word| word == u64::from(expected)));
    }
}
