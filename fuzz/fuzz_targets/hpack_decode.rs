//! The engine's HPACK decoder (crates/engine/src/h2/hpack.rs, by hand for
//! the hot path) against loona-hpack's on the same header blocks, one table
//! across them as on a connection: both accept with the same fields, or
//! both refuse; never a panic, and never a table past its limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netbench_engine::h2::fuzz_hpack;

fuzz_target!(|input: &[u8]| {
    let Some((&knobs, rest)) = input.split_first() else {
        return;
    };
    // Up to four blocks decoded in turn, so dynamic table entries and size
    // updates from one are what the next refers to.
    let count = usize::from(knobs % 4) + 1;
    let size = rest.len().div_ceil(count).max(1);
    let blocks: Vec<&[u8]> = rest.chunks(size).collect();
    for (i, (got, agreed)) in fuzz_hpack(&blocks).into_iter().enumerate() {
        assert!(agreed, "block {i} decoded as {got:?} by netbench, otherwise by loona-hpack");
    }
});
