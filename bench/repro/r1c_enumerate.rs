// Enumerate's counter: on the report edge LLVM substitutes the known wrapped value (0), the
// counter is no longer an induction variable, and its check stays; panic mode removes it.
extern crate alloc;
use alloc::vec::Vec;
#[unsafe(no_mangle)]
pub fn r1c(keys: &[u64]) -> u64 {
    let mut v: Vec<u64> = Vec::with_capacity(64);
    v.resize(64, 0);
    for (i, &k) in keys.iter().enumerate() {
        let j = (k as usize) + 1; // a second check in the loop
        v[j & 63] ^= i as u64;
    }
    v[3]
}
