// hashbrown's probe loop: the SIMD group and the tag broadcast are live across the checked
// `pos + bit`, whose report call (preserve_mostcc: XMM not preserved) clobbers them. The report
// is an `invoke` (the Vec must be dropped on unwind), so the RA cannot split around the call
// and spills the vectors in the hot path.
use core::arch::x86_64::*;
#[unsafe(no_mangle)]
pub fn ra(table: Vec<u64>, mask: usize, keys: &[u64]) -> u64 {
    let ctrl = table.as_ptr() as *const u8;
    let mut found = 0u64;
    for &k in keys {
        let hash = k.wrapping_mul(0xf1357aea2e62a9c5).rotate_left(26) as usize;
        let tag = unsafe { _mm_set1_epi8((hash >> 57) as i8) };
        let (mut pos, mut stride) = (hash & mask, 0usize);
        'probe: loop {
            let group = unsafe { _mm_loadu_si128(ctrl.add(pos) as *const __m128i) };
            let mut bits = unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(group, tag)) } as u16;
            while bits != 0 {
                let index = (pos + bits.trailing_zeros() as usize) & mask; // checked add
                if unsafe { *(ctrl as *const u64).sub(index + 1) } == k { found ^= index as u64; break 'probe; }
                bits &= bits - 1;
            }
            if unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(group, _mm_set1_epi8(-1))) } != 0 { break; }
            stride = stride.wrapping_add(16);
            pos = pos.wrapping_add(stride) & mask;
        }
    }
    found
}
