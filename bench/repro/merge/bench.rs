// Benchmark driver: bench <workload>; inputs never overflow (the common case).
#![feature(integer_overflow_report)]
#![allow(dead_code)]
mod work;
use std::hint::black_box as bb;
use std::sync::atomic::{AtomicUsize, Ordering};
use work::*;

static REPORTS: AtomicUsize = AtomicUsize::new(0);
#[core::panic::report_integer_overflow]
fn count(o: &core::panic::IntegerOverflow) {
    // use the operands so that LLVM cannot drop them from the entry point instances
    REPORTS.fetch_add(1, Ordering::Relaxed);
    bb((o.lhs().to_i128(), o.rhs().map(|r| r.to_i128())));
}

fn lcg(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed; (0..n).map(|_| { x = x.wrapping_mul(1103515245).wrapping_add(12345); (x >> 16) as u8 }).collect()
}

fn main() {
    let w = std::env::args().nth(1).expect("workload");
    let n = 1usize << 20;
    let bytes = lcg(n, 7);
    let ia: Vec<i32> = lcg(n / 4, 8).iter().map(|&b| b as i32 - 128).collect();
    let ib: Vec<i32> = lcg(n / 4, 9).iter().map(|&b| b as i32 - 100).collect();
    let mut out = vec![0i32; n / 4];
    let mut counts = [0u32; 256];
    let r: u64 = match w.as_str() {
        "sum_u32" => w_sum_u32(bb(&bytes)) as u64,
        "sum_u64" => w_sum_u64(bb(&bytes)),
        "adler" => w_adler(bb(&bytes), bb(5552)) as u64,
        "hist" => { w_hist(bb(&bytes), &mut counts); counts.iter().map(|&c| c as u64).sum() }
        "dot" => w_dot(bb(&ia), bb(&ib)) as i64 as u64,
        "map_add" => { w_map_add(bb(&ia), bb(&ib), &mut out); out.iter().map(|&x| x as i64 as u64).fold(0, u64::wrapping_add) }
        "map_mul" => { w_map_mul(bb(&ia), bb(&ib), &mut out); out.iter().map(|&x| x as i64 as u64).fold(0, u64::wrapping_add) }
        _ => panic!("unknown workload"),
    };
    println!("{w} {r} reports={}", REPORTS.load(Ordering::Relaxed));
}
