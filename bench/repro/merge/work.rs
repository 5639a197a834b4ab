// Workloads shared by tests.rs and bench.rs. Each is a non-inlined, unmangled function.
use std::sync::atomic::{AtomicU32, Ordering};

#[unsafe(no_mangle)] #[inline(never)]
pub fn w_sum_u32(v: &[u8]) -> u32 { let mut s = 0u32; for &b in v { s += b as u32; } s }

#[unsafe(no_mangle)] #[inline(never)]
pub fn w_sum_u64(v: &[u8]) -> u64 { let mut s = 0u64; for &b in v { s += b as u64; } s }

/// u8 accumulator (overflows quickly; used by the tests)
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_sum_u8(v: &[u8]) -> u8 { let mut s = 0u8; for &b in v { s += b; } s }

/// adler32-like: a += byte; b += a; modulo every nmax bytes
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_adler(v: &[u8], nmax: usize) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in v.chunks(nmax) {
        for &x in chunk { a += x as u32; b += a; }
        a %= MOD; b %= MOD;
    }
    (b << 16) | a
}

#[unsafe(no_mangle)] #[inline(never)]
pub fn w_hist(v: &[u8], counts: &mut [u32; 256]) { for &b in v { counts[b as usize] += 1; } }

/// histogram into a Vec owned by the function: under panic=unwind the report is an invoke
/// (the Vec must be dropped if the handler panics); u8 counts so that the tests overflow.
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_hist_owned(v: &[u8]) -> u32 {
    let mut counts = vec![0u8; 256];
    for &b in v { counts[b as usize] += 1; }
    counts.iter().map(|&c| c as u32).fold(0u32, |a, c| a.wrapping_mul(31).wrapping_add(c))
}

/// sum over a copy owned by the function (invoke + landing pad that drops the copy)
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_sum_owned(v: &[u8]) -> u16 {
    let tmp: Vec<u8> = v.to_vec();
    let mut s = 0u16;
    for &b in &tmp { s += b as u16; }
    s
}

#[unsafe(no_mangle)] #[inline(never)]
pub fn w_dot(a: &[i32], b: &[i32]) -> i32 {
    let mut s = 0i32;
    for (x, y) in a.iter().zip(b) { s += x * y; }
    s
}

/// element-wise (not in the brief): the only workload whose checks do not depend on a
/// loop-carried value
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_map_add(a: &[i32], b: &[i32], out: &mut [i32]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) { *o = x + y; }
}
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_map_mul(a: &[i32], b: &[i32], out: &mut [i32]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) { *o = x * y; }
}

/// early return after the overflow; two sites (mul then add)
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_break(v: &[u8], stop: u8) -> (u32, usize) {
    let mut s = 0u32;
    for (i, &b) in v.iter().enumerate() {
        let t = b as u32 * 0x0200_0000;
        s += t;
        if b == stop { return (s, i); }
    }
    (s, v.len())
}

/// bounds check (panic exit) after an overflow in an earlier iteration
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_gather(v: &[u8], idx: &[usize]) -> u8 {
    let mut s = 0u8;
    for &i in idx { s += v[i]; }
    s
}

pub static OBSERVED: AtomicU32 = AtomicU32::new(0);
#[inline(never)]
pub fn observe(x: u8) { OBSERVED.fetch_add(x as u32, Ordering::Relaxed); }

/// calls a non-inlined function with a side effect: must not be merged
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_call(v: &[u8]) -> u8 { let mut s = 0u8; for &b in v { s += b; observe(s); } s }

/// no computable trip count: must not be merged
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_collatz(mut x: u32) -> u8 {
    let mut steps = 0u8;
    while x != 1 { x = if x % 2 == 0 { x / 2 } else { 3 * x + 1 }; steps += 1; }
    steps
}

// ---- added for variant (f) ----
/// early exit BEFORE the checked mul of the exiting iteration (that iteration's mul never runs)
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_mul_until(a: &[i32], b: &[i32], out: &mut [i32], stop: i32) -> usize {
    let n = out.len().min(a.len()).min(b.len());
    for i in 0..n {
        if a[i] == stop { return i; }
        out[i] = a[i] * b[i];
    }
    n
}
/// early exit AFTER the checked mul of the exiting iteration
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_mul_upto(a: &[i32], b: &[i32], out: &mut [i32], stop: i32) -> usize {
    let n = out.len().min(a.len()).min(b.len());
    for i in 0..n {
        out[i] = a[i] * b[i];
        if a[i] == stop { return i; }
    }
    n
}
/// two element-wise sites (mul, then add)
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_map_muladd(a: &[i32], b: &[i32], out: &mut [i32]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) { *o = x * y + x; }
}
/// conditional check (P may not dominate the latch unless if-converted)
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_map_mul_cond(a: &[i32], b: &[i32], out: &mut [i32]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) { if *x & 1 == 0 { *o = x * y; } }
}
/// element-wise mul of a gathered value: bounds-check panic exit after an earlier overflow
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_gather_mul(v: &[i32], idx: &[usize], out: &mut [i32]) {
    for (o, &i) in out.iter_mut().zip(idx) { *o = v[i] * 1000; }
}
/// element-wise into an owned Vec (under panic=unwind the report is an invoke with a cleanup pad)
#[unsafe(no_mangle)] #[inline(never)]
pub fn w_mul_owned(a: &[i32], b: &[i32]) -> i64 {
    let t: Vec<i32> = a.iter().zip(b).map(|(x, y)| x * y).collect();
    t.iter().map(|&v| v as i64).fold(0i64, |s, v| s.wrapping_add(v))
}
