// Correctness tests for the guard prototype: build in report mode with and without
// -Zllvm-plugins=guard.so (see README.md) and run; every case checks the values against
// wrapping arithmetic and the reports (operation and operands, in order) against one per
// wrapping increment, which is what report mode makes without the plugin.
#![feature(integer_overflow_report)]
use core::panic::IntegerOverflow;
use std::hint::black_box;
use std::sync::Mutex;

static LOG: Mutex<Vec<(i128, i128)>> = Mutex::new(Vec::new());

fn val(v: core::panic::IntegerValue) -> i128 {
    v.to_i128().unwrap_or_else(|| v.to_u128().unwrap() as i128)
}

#[core::panic::report_integer_overflow]
fn record(o: &IntegerOverflow) {
    LOG.lock().unwrap().push((val(o.lhs()), o.rhs().map(val).unwrap_or(0)));
}

fn take() -> Vec<(i128, i128)> {
    std::mem::take(&mut *LOG.lock().unwrap())
}

#[inline(never)]
fn hist32(v: &[u8], c: &mut [u32; 256]) {
    for &b in v {
        c[b as usize] += 1;
    }
}

#[inline(never)]
fn hist8(v: &[u8], c: &mut [u8; 16]) {
    for &b in v {
        c[(b & 15) as usize] += 1;
    }
}

#[inline(never)]
fn step3(v: &[u8], c: &mut [u16; 64]) {
    for &b in v {
        c[(b & 63) as usize] += 3;
    }
}

#[inline(never)]
fn two_sites(v: &[u8], c: &mut [u64; 32]) {
    for &b in v {
        c[(b & 31) as usize] += 1;
        c[(b >> 3) as usize] += 2;
    }
}

#[inline(never)]
fn with_break(v: &[u8], c: &mut [u32; 256]) {
    for &b in v {
        if b == 0 {
            break;
        }
        c[b as usize] += 1;
    }
}

#[inline(never)]
fn also_writes(v: &[u8], c: &mut [u32; 256], out: &mut [u8]) {
    for (i, &b) in v.iter().enumerate() {
        c[b as usize] += 1;
        out[i] = b ^ 1;
    }
}

#[inline(never)]
fn local(v: &[u8], start: u16) -> u32 {
    let mut c = [start; 16];
    for &b in v {
        c[(b & 15) as usize] += 1;
    }
    c.iter().fold(0u32, |a, &x| a.wrapping_mul(31).wrapping_add(x as u32))
}

#[inline(never)]
fn nested(rows: &[Vec<u8>], c: &mut [u8; 16]) {
    for r in rows {
        for &b in r {
            c[(b & 15) as usize] += 1;
        }
    }
}

/// What report mode does, computed with `overflowing_add`: the counters and the reports.
fn model<T: Copy + Into<u128>>(
    c: &mut [T],
    incs: impl IntoIterator<Item = (usize, T)>,
    add: impl Fn(T, T) -> (T, bool),
) -> Vec<(i128, i128)> {
    let mut reports = vec![];
    for (i, d) in incs {
        let (r, o) = add(c[i], d);
        if o {
            reports.push((c[i].into() as i128, d.into() as i128));
        }
        c[i] = r;
    }
    reports
}

struct T {
    pass: u32,
    fail: u32,
}

impl T {
    fn check<V: PartialEq + std::fmt::Debug>(&mut self, name: &str, got: V, want: V, reps: Vec<(i128, i128)>) {
        let got_reps = take();
        if got == want && got_reps == reps {
            self.pass += 1;
            println!("PASS {name} ({} reports)", reps.len());
        } else {
            self.fail += 1;
            println!("FAIL {name}: {got:?} want {want:?}; reports {} {:?} want {} {:?}", got_reps.len(),
                     &got_reps[..got_reps.len().min(3)], reps.len(), &reps[..reps.len().min(3)]);
        }
    }
}

fn bytes(n: usize, seed: u32) -> Vec<u8> {
    let mut s = seed;
    (0..n).map(|_| { s = s.wrapping_mul(1664525).wrapping_add(1013904223); (s >> 24) as u8 }).collect()
}

fn main() {
    let mut t = T { pass: 0, fail: 0 };
    for n in [0usize, 1, 7, 300, 5000] {
        let v = bytes(n, n as u32 + 1);
        for start in [0u32, u32::MAX - 40, u32::MAX] {
            let mut c = [0u32; 256];
            c[v.first().copied().unwrap_or(0) as usize] = start;
            let mut want = c;
            let reps = model(&mut want, v.iter().map(|&b| (b as usize, 1u32)), u32::overflowing_add);
            hist32(black_box(&v), &mut c);
            t.check(&format!("hist32 n={n} start={start}"), c, want, reps);
            let mut c = [0u32; 256];
            c[5] = start;
            let mut want = c;
            let upto = v.iter().position(|&b| b == 0).unwrap_or(v.len());
            let reps = model(&mut want, v[..upto].iter().map(|&b| (b as usize, 1u32)), u32::overflowing_add);
            with_break(black_box(&v), &mut c);
            t.check(&format!("with_break n={n} start={start}"), c, want, reps);
            let mut c = [0u32; 256];
            c[v.last().copied().unwrap_or(0) as usize] = start;
            let mut want = c;
            let reps = model(&mut want, v.iter().map(|&b| (b as usize, 1u32)), u32::overflowing_add);
            let mut out = vec![0u8; n];
            also_writes(black_box(&v), &mut c, &mut out);
            let want_out: Vec<u8> = v.iter().map(|&b| b ^ 1).collect();
            t.check(&format!("also_writes n={n} start={start}"), (c, out), (want, want_out), reps);
        }
        for start in [0u8, 200, 255] {
            let mut c = [start; 16];
            let mut want = c;
            let reps = model(&mut want, v.iter().map(|&b| ((b & 15) as usize, 1u8)), u8::overflowing_add);
            hist8(black_box(&v), &mut c);
            t.check(&format!("hist8 n={n} start={start}"), c, want, reps);
            let rows = vec![v.clone(), v[..n / 2].to_vec(), vec![]];
            let mut c = [start; 16];
            let mut want = c;
            let reps = model(&mut want, rows.iter().flatten().map(|&b| ((b & 15) as usize, 1u8)), u8::overflowing_add);
            nested(black_box(&rows), &mut c);
            t.check(&format!("nested n={n} start={start}"), c, want, reps);
            let mut w = [start as u16; 16];
            let reps = model(&mut w, v.iter().map(|&b| ((b & 15) as usize, 1u16)), u16::overflowing_add);
            let want = w.iter().fold(0u32, |a, &x| a.wrapping_mul(31).wrapping_add(x as u32));
            t.check(&format!("local n={n} start={start}"), local(black_box(&v), start as u16), want, reps);
        }
        for start in [0u16, 60000, 65535] {
            let mut c = [start; 64];
            let mut want = c;
            let reps = model(&mut want, v.iter().map(|&b| ((b & 63) as usize, 3u16)), u16::overflowing_add);
            step3(black_box(&v), &mut c);
            t.check(&format!("step3 n={n} start={start}"), c, want, reps);
        }
        for start in [0u64, u64::MAX - 100, u64::MAX] {
            let mut c = [start; 32];
            let mut want = c;
            let reps = model(&mut want, v.iter().flat_map(|&b| [((b & 31) as usize, 1u64), ((b >> 3) as usize, 2)]),
                             u64::overflowing_add);
            two_sites(black_box(&v), &mut c);
            t.check(&format!("two_sites n={n} start={start}"), c, want, reps);
        }
    }
    println!("{} passed, {} failed", t.pass, t.fail);
    if t.fail > 0 {
        std::process::exit(1);
    }
}
