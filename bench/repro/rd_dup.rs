// miniz find_match: `len - 1` is loop-invariant and checked once per (unrolled) probe. Panic mode
// keeps one check (the first would have panicked); report mode keeps all three at O2, and
// `left -= 1; if left == 0` needs two tests per iteration. O3's non-trivial unswitching removes
// the invariant ones.
#[unsafe(no_mangle)]
pub fn rd(next: &[u16; 32768], dict: &[u8; 33024], pos: usize, len: u32, c01: u8, mut left: u32) -> usize {
    let mut p = pos & 32767;
    loop {
        left -= 1; // checked
        if left == 0 { return p; }
        for _ in 0..3 {
            let q = next[p] as usize;
            let dist = pos - q; // checked
            if q == 0 || dist > 32768 || len as usize - 1 >= 258 { return 0; } // `len - 1` checked
            p = q & 32767;
            if dict[p + len as usize - 1] == c01 { return p; }
        }
    }
}
