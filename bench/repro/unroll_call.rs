//! A report call in a loop keeps LLVM from unrolling the loop.
//!
//! LLVM's default unrolling preferences (`BasicTTIImpl::getUnrollingPreferences`, used by the
//! x86 target, and by AArch64's for a CPU with a scheduling model; AArch64's generic CPU unrolls
//! no such loop in any mode) allow partial and runtime unrolling only of loops without calls,
//! and a report block that rejoins the loop is part of it: `-Cremark=all` says "TTI (success):
//! advising against unrolling the loop because it contains a call" for `hist` in report mode.
//! Off mode unrolls `hist` four times; panic mode does not unroll it either (its checks are
//! extra exits, and runtime unrolling of loops with extra exits is off by default).
//!
//! ```sh
//! TC=/var/tmp/overflow-harness/toolchain-current/bin
//! RUSTC_BOOTSTRAP=1 $TC/rustc --edition=2024 -Copt-level=2 -Coverflow-checks=report unroll_call.rs
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect=unroll_call::hist ./unroll_call
//! ```
//!
//! Instructions (toolchain `83049e946a5d23ce`, 2026-12-06), `hist` and `sum`: off 7209400 and
//! 3605320; panic (`on`) 23593160 and 18350320; report 20972040 and 15729040; report with
//! `-Cllvm-args=-unroll-runtime -Cllvm-args=-unroll-allow-partial` (which override the target's
//! preferences for every loop, so this is only what unrolling would give) 14091000 and 8848080.
//! Report/off: `hist` 2.91 -> 1.95, `sum` 4.36 -> 2.45. Every build printed the same results.
//! Rustc patch 10 gives `hist` a copy without checks, and so without the call, for the runs whose
//! counters cannot overflow: with its toolchain `4ff3ee30ed299335`, `hist` costs 7237960
//! instructions in report mode (1.004 of off mode), `sum` is unchanged.
//! The same two flags change `bench/workloads.rs` in report mode little (`blend` 22946711 ->
//! 20980907, `matmul` 43434602 -> 44508827, `parse` unchanged), and the crates.io workloads at
//! `-O2` (`bench/repro/cold/cb.sh` with the flags added): `core-sum` 78646823 -> 44241679,
//! `base64-decode` +0.45%, `miniz-deflate` +0.26%, the others within 0.01%.

use std::hint::black_box;

#[inline(never)]
pub fn hist(v: &[u8], counts: &mut [u32; 256]) {
    for &b in v {
        counts[b as usize] += 1;
    }
}

#[inline(never)]
pub fn sum(v: &[u8]) -> u32 {
    v.iter().map(|&b| b as u32).sum()
}

fn main() {
    let data: Vec<u8> = (0..65536u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    let mut counts = [0u32; 256];
    let mut s = 0u32;
    for _ in 0..40 {
        hist(black_box(&data), &mut counts);
        s = s.wrapping_add(sum(black_box(&data)));
    }
    println!("{} {}", counts.iter().fold(0u32, |a, &c| a.wrapping_mul(31).wrapping_add(c)), s);
}
