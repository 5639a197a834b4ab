// SPDX-License-Identifier: GPL-2.0

//! A module built outside the kernel tree that overflows once with each checked operation, and
//! once with operands wider than a register.
//!
//! `test` builds it with `make M=...` against the x86_64 report-mode kernel, loads it, unloads it
//! and loads it again, and checks each report's operation, operands and type, and the wrapped
//! values it logs.

use core::hint::black_box;
use kernel::prelude::*;

module! {
    type: OverflowOot,
    name: "overflow_oot",
    authors: ["overflow-harness"],
    description: "Overflows once with each checked operation",
    license: "GPL",
}

struct OverflowOot;

impl kernel::Module for OverflowOot {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let add = black_box(200u8) + black_box(100);
        let sub = black_box(i16::MIN) - black_box(1);
        let mul = black_box(70_000u32) * black_box(70_000);
        let neg = -black_box(i64::MIN);
        let shl = black_box(1u64) << black_box(70u32);
        // Wider than a register: the report is a call, not a trap, on every architecture.
        let wide = black_box(u128::MAX) + black_box(2);
        pr_info!("wrapped: add {add} sub {sub} mul {mul} neg {neg} shl {shl} wide {wide}\n");
        Ok(OverflowOot)
    }
}
