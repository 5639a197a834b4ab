//! The shape of `itoa`'s loop (four digits per iteration, written at `curr` and `curr + 2`), the
//! workload where report mode costs most against panic mode (1.61x in x86_64 instructions).
//!
//! ```sh
//! TC=/var/tmp/overflow-harness/toolchain-current/bin
//! for m in on report; do
//!     RUSTC_BOOTSTRAP=1 $TC/rustc --edition=2024 --crate-type=lib -Copt-level=2 \
//!         -Coverflow-checks=$m --emit=asm -o itoa_unroll-$m.s itoa_unroll.rs
//! done
//! ```
//!
//! With `-Coverflow-checks=on`, LLVM unrolls the loop completely into straight-line code (86
//! instructions at `-Copt-level=2`, four copies, no branch back): a `curr -= 4` that wrapped
//! would panic, so `curr` bounds the trip count at 5 and every later `curr + 2` is known not to
//! overflow. With `report`, a wrapped `curr` continues, so nothing in the loop bounds it, and scalar
//! evolution derives no trip count from `n /= 10000` (llvm#116119). Rustc patch 9 bounds such a
//! division loop itself (a `u64` goes round at most 4 times), so `curr -= 4` and `curr + 2`
//! cannot wrap and their checks go: report mode's code is off mode's (26 instructions, a loop).
//! What it does not give back is the unrolling. Giving scalar evolution the bound through a
//! counted exit was tried (session 12): SimplifyCFG folds that exit into the latch's condition, so
//! no exit has an exact trip count and the unroller keeps the loop, and in `itoa` itself, whose
//! loop keeps the check of `divmod100`, the counter made the workload slower (53.2M instructions
//! against 50.4M).
#![no_std]

#[unsafe(no_mangle)]
pub unsafe fn digits(buf: *mut u8, mut n: u64, lut: *const u8) -> usize {
    let mut curr = 20usize;
    while n >= 10000 {
        let rem = (n % 10000) as usize;
        n /= 10000;
        let d1 = (rem / 100) * 2;
        let d2 = (rem % 100) * 2;
        curr -= 4;
        unsafe {
            core::ptr::copy_nonoverlapping(lut.add(d1), buf.add(curr), 2);
            core::ptr::copy_nonoverlapping(lut.add(d2), buf.add(curr + 2), 2);
        }
    }
    curr
}
