// Long sums for rustc patch 8's wide second sum (session 10): `long_sums N` sums N `u16`s and N bytes
// into `u32`s ten times. Measured with
//   valgrind --tool=callgrind --toggle-collect='*sum16*' ./long_sums 70000
// built with `-Copt-level=3 -Coverflow-checks=report` with and without `-Zmerge-overflow-reports`
// (and `off`).
#![feature(integer_overflow_report)]
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
static N: AtomicU64 = AtomicU64::new(0);
#[core::panic::report_integer_overflow]
fn h(o: &core::panic::IntegerOverflow) { N.fetch_add(o.location().line() as u64, Ordering::Relaxed); }
#[inline(never)]
fn sum16(v: &[u16], s0: u32) -> u32 { let mut s = s0; for &x in v { s += x as u32; } s }
#[inline(never)]
fn sum8(v: &[u8], s0: u32) -> u32 { let mut s = s0; for &x in v { s += x as u32; } s }
fn main() {
    let n: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let v16: Vec<u16> = (0..n).map(|i| (i * 7919 % 65536) as u16).collect();
    let v8: Vec<u8> = (0..n).map(|i| (i * 31 % 256) as u8).collect();
    let mut t = 0u32;
    for _ in 0..10 { t = t.wrapping_add(sum16(black_box(&v16), 0)); t = t.wrapping_add(sum8(black_box(&v8), 0)); }
    println!("{t} {}", N.load(Ordering::Relaxed));
}
