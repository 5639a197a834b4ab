// `blend` of bench/workloads.rs: 1.30 of panic mode's instructions at -O2.
//
// Build as in README.md. The check of `256 - alpha` is loop-invariant and stays in the loop in
// both modes at -O2 (SimpleLoopUnswitch's non-trivial unswitching runs at -O3 only). In panic
// mode its failure leaves the loop, so `256 - alpha <= 256` after it and `y * (256 - alpha)`
// cannot overflow: no check. Report mode goes on with the wrapped difference, so that check stays
// (the semantics), and `x * alpha` keeps `x` in a second register for its report. Loop at -O2:
// 17 instructions per byte in report mode, 13 in panic mode. At -O3 the loop is unswitched on
// `alpha > 256`, and the copy where `alpha <= 256` still has `umul.with.overflow` for
// `y * (256 - alpha)`.

#[inline(never)]
pub fn blend_row(out: &mut [u8], a: &[u8], b: &[u8], alpha: u16) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = ((x as u16 * alpha + y as u16 * (256 - alpha)) >> 8) as u8;
    }
}
