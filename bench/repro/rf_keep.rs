// The report takes (wrapped result, rhs): rhs must survive the two-address `add`, which in panic
// mode overwrites it -> one extra `mov` per checked add whose rhs is otherwise dead.
#[unsafe(no_mangle)]
pub fn rf(idx: &[u32], table: &[u64; 1024], base: usize) -> u64 {
    let mut s = 0u64;
    for &x in idx {
        s ^= table[(base + x as usize) & 1023]; // checked add, x dead afterwards
    }
    s
}
