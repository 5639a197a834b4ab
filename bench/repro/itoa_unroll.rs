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
//! With `-Coverflow-checks=on`, LLVM unrolls the loop completely into straight-line code (69
//! instructions, no branch back, no check left): a `curr -= 4` that wrapped would panic, so
//! `curr` bounds the trip count at 5 and every later `curr + 2` is known not to overflow. With
//! `report`, a wrapped `curr` continues, so nothing bounds the trip count (SCEV cannot derive one
//! from `n /= 10000`): the loop stays a loop (86 instructions, six callee-saved registers pushed),
//! with both checks in every iteration. Nothing the compiler emits at the check can give the bound
//! back without assuming the handler does not return; duplicating the code after each report
//! instead of merging back into the loop would (issue 13).
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
