// SPDX-License-Identifier: GPL-2.0

//! Times integer overflows that repeat at one site, reported already, as an overflow on every
//! packet would: `bench`'s storm (harness/src/runtime.rs).
//!
//! Under QEMU's `-icount shift=0`, the guest's clock advances one nanosecond per instruction, so
//! the times this prints are instruction counts. Each line is `storm: <case> <repeats> <ns>`, the
//! fastest of `ROUNDS` loops, so that a timer interrupt in one loop does not count. A
//! `u32` add reports through a trap on x86_64 and arm64; a `u128` add, wider than a register,
//! through a call on every architecture.

use core::hint::black_box;
use kernel::{
    prelude::*,
    time::{Instant, Monotonic},
};

module! {
    type: StormRust,
    name: "storm_rust",
    authors: ["overflow-harness"],
    description: "Times repeated integer overflows at one site",
    license: "GPL",
}

const REPEATS: u32 = 20_000;

/// Loops per case; the fastest is printed.
const ROUNDS: u32 = 5;

#[inline(never)]
fn add_u32(a: u32, b: u32) -> u32 {
    a + b
}

#[inline(never)]
fn add_u128(a: u128, b: u128) -> u128 {
    a + b
}

/// Calls `f` `REPEATS` times, `ROUNDS` times over, and prints the shortest time that took.
fn time(case: &str, mut f: impl FnMut()) {
    let mut best = i64::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::<Monotonic>::now();
        for _ in 0..REPEATS {
            f();
        }
        best = best.min(start.elapsed().as_nanos());
    }
    pr_info!("storm: {case} {REPEATS} {best}\n");
}

struct StormRust;

impl kernel::Module for StormRust {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        time("u32-add", || {
            black_box(add_u32(black_box(1), black_box(2)));
        });
        time("u128-add", || {
            black_box(add_u128(black_box(1), black_box(2)));
        });
        // In panic mode the first overflow would stop the machine.
        if cfg!(CONFIG_RUST_OVERFLOW_REPORT) || !cfg!(CONFIG_RUST_OVERFLOW_CHECKS) {
            // The first overflow at each site is the report; the storm is what follows.
            black_box(add_u32(black_box(u32::MAX), black_box(1)));
            black_box(add_u128(black_box(u128::MAX), black_box(1)));
            time("u32-add-overflow-repeat", || {
                black_box(add_u32(black_box(u32::MAX), black_box(1)));
            });
            time("u128-add-overflow-repeat", || {
                black_box(add_u128(black_box(u128::MAX), black_box(1)));
            });
        }
        Ok(StormRust)
    }
}
