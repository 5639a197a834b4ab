//! ryu's `mul_shift_all_64` in small: one check site inlined three times with the same operands.
//! Panic mode keeps one `j - 64` check and one shift check (after the first passes, the others
//! cannot fail); report mode keeps every report, since each evaluation reports.
#![no_std]

#[inline(always)]
fn shift(x: u64, j: u32) -> u64 {
    x >> (j - 64)
}

#[unsafe(no_mangle)]
pub fn three(a: u64, b: u64, c: u64, j: u32, out: &mut [u64; 3]) {
    out[0] = shift(a, j);
    out[1] = shift(b, j);
    out[2] = shift(c, j);
}
