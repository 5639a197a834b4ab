// Correctness tests for the merge prototype. Run as: tests <mode>, mode = none|a|b|c
// (what the binary was built with: none = report mode without the plugin, or the variant).
#![feature(integer_overflow_report)]
#![allow(dead_code)]
mod work;
use core::panic::{IntegerOverflow, OverflowOp};
use std::sync::Mutex;
use work::*;

#[derive(Clone, Debug, PartialEq)]
struct Ev { op: &'static str, lhs: i128, rhs: i128 }

static LOG: Mutex<Vec<Ev>> = Mutex::new(Vec::new());
static mut ECHO: bool = false;

fn val(v: core::panic::IntegerValue) -> i128 {
    v.to_i128().unwrap_or_else(|| v.to_u128().unwrap() as i128)
}

#[core::panic::report_integer_overflow]
fn record(o: &IntegerOverflow) {
    let op = match o.op() { OverflowOp::Add => "add", OverflowOp::Sub => "sub", OverflowOp::Mul => "mul", OverflowOp::Neg => "neg", _ => "shift" };
    let e = Ev { op, lhs: val(o.lhs()), rhs: o.rhs().map(val).unwrap_or(0) };
    if unsafe { ECHO } { eprintln!("REPORT {} {} {} at line {}", e.op, e.lhs, e.rhs, o.location().line()); }
    LOG.lock().unwrap().push(e);
}

fn take() -> Vec<Ev> { std::mem::take(&mut *LOG.lock().unwrap()) }

/// expected reports from the overflow events (site index in program order, event)
fn expect(events: &[(usize, Ev)], mode: &str) -> Vec<Ev> {
    if mode == "none" { return events.iter().map(|e| e.1.clone()).collect(); }
    let nsites = events.iter().map(|e| e.0 + 1).max().unwrap_or(0);
    let mut out = vec![];
    for s in 0..nsites {
        let of: Vec<&Ev> = events.iter().filter(|e| e.0 == s).map(|e| &e.1).collect();
        if of.is_empty() { continue; }
        out.push(if mode == "b" { of[of.len() - 1].clone() } else { of[0].clone() });
    }
    out
}

struct T { pass: u32, fail: u32, mode: String }
impl T {
    fn check<V: PartialEq + std::fmt::Debug>(&mut self, name: &str, got: V, want: V, events: &[(usize, Ev)], merged: bool) {
        let reports = take();
        let mode = if merged { self.mode.as_str() } else { "none" };
        let exp = expect(events, mode);
        let ok_val = got == want;
        let ok_rep = if mode == "c" || mode == "d" {
            reports.len() == exp.len() && reports.iter().zip(&exp).all(|(a, b)| a.op == b.op)
        } else { reports == exp };
        if ok_val && ok_rep { self.pass += 1; println!("PASS {name} ({} overflows, {} reports)", events.len(), reports.len()); }
        else {
            self.fail += 1;
            println!("FAIL {name}: value {:?} want {:?}; reports ({}) {:?}\n      want ({}) {:?}", got, want, reports.len(),
                     &reports[..reports.len().min(4)], exp.len(), &exp[..exp.len().min(4)]);
        }
    }
}

fn ev(op: &'static str, lhs: i128, rhs: i128) -> Ev { Ev { op, lhs, rhs } }

fn lcg(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed; (0..n).map(|_| { x = x.wrapping_mul(1103515245).wrapping_add(12345); (x >> 16) as u8 }).collect()
}

fn gather_child() {
    unsafe { ECHO = true; }
    std::panic::set_hook(Box::new(|_| eprintln!("PANIC")));
    let v = vec![200u8; 8];
    let idx = [0usize, 1, 2, 3, 99, 4];   // overflow at the 2nd element, out of bounds at the 5th
    let r = w_gather(std::hint::black_box(&v), std::hint::black_box(&idx));
    eprintln!("RETURNED {r}");
}

fn gather_mul_child() {
    unsafe { ECHO = true; }
    std::panic::set_hook(Box::new(|_| eprintln!("PANIC")));
    let v = vec![5i32, 3_000_000, 3_100_000, 3_200_000, 3_300_000, 7, 8, 9];
    let idx = [0usize, 1, 2, 3, 99, 4];
    let mut out = vec![0i32; 6];
    w_gather_mul(std::hint::black_box(&v), std::hint::black_box(&idx), &mut out);
    eprintln!("RETURNED {}", out[0]);
}

/// reference for the element-wise workloads: (site, op) list per element
fn map_ref(a: &[i32], b: &[i32], f: &dyn Fn(i32, i32, &mut Vec<(usize, Ev)>) -> Option<i32>, e: &mut Vec<(usize, Ev)>) -> Vec<i32> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y, e).unwrap_or(0)).collect()
}
fn mul_ev(x: i32, y: i32, site: usize, e: &mut Vec<(usize, Ev)>) -> i32 {
    let (p, o) = x.overflowing_mul(y); if o { e.push((site, ev("mul", x as i128, y as i128))); } p
}
fn add_ev(x: i32, y: i32, site: usize, e: &mut Vec<(usize, Ev)>) -> i32 {
    let (p, o) = x.overflowing_add(y); if o { e.push((site, ev("add", x as i128, y as i128))); } p
}

fn rescan_tests(t: &mut T) {
    use std::hint::black_box as bb;
    for n in [1usize, 2, 7, 8, 9, 64, 1000, 4099] {
        // overflow only in iteration 0 / only in the last iteration / in both / in the middle (twice)
        let places: Vec<(&str, Vec<usize>)> = vec![("first", vec![0]), ("last", vec![n - 1]), ("first+last", vec![0, n - 1]),
            ("mid", vec![n / 2, n / 2 + n / 3]), ("none", vec![])];
        // map_mul_cond checks only even x (x = 1000 + i): an unchecked overflow at i=1 precedes the checked one at i=2
        let mut places = places; if n >= 3 { places.push(("odd-then-even", vec![1, 2])); }
        for (pname, pos) in &places {
            let a: Vec<i32> = (0..n).map(|i| 1000 + (i as i32 % 7)).collect();
            let mut b: Vec<i32> = (0..n).map(|i| 3 - (i as i32 % 5)).collect();
            for &p in pos { b[p] = 10_000_000 + p as i32; }
            // map_mul
            let mut e = vec![];
            let want = map_ref(&a, &b, &|x, y, e| Some(mul_ev(x, y, 0, e)), &mut e);
            let mut out = vec![0i32; n]; w_map_mul(bb(&a), bb(&b), &mut out);
            t.check(&format!("rescan map_mul {pname} n={n}"), out, want, &e, true);
            // owned Vec (invoke under unwind)
            let mut e = vec![];
            let want = map_ref(&a, &b, &|x, y, e| Some(mul_ev(x, y, 0, e)), &mut e).iter().fold(0i64, |s, &v| s.wrapping_add(v as i64));
            t.check(&format!("rescan mul_owned {pname} n={n}"), w_mul_owned(bb(&a), bb(&b)), want, &e, true);
            // map_add: overflow where b is big and a near MAX
            let a2: Vec<i32> = (0..n).map(|i| if pos.contains(&i) { i32::MAX - 3 } else { i as i32 }).collect();
            let mut e = vec![];
            let want = map_ref(&a2, &b, &|x, y, e| Some(add_ev(x, y, 0, e)), &mut e);
            let mut out = vec![0i32; n]; w_map_add(bb(&a2), bb(&b), &mut out);
            t.check(&format!("rescan map_add {pname} n={n}"), out, want, &e, true);
            // muladd: site 0 = mul, site 1 = add (x*y + x); add overflows where the product is near MAX
            let a3: Vec<i32> = (0..n).map(|i| if pos.contains(&i) { 46341 } else { 1000 }).collect();
            let b3: Vec<i32> = (0..n).map(|i| if pos.contains(&i) { 46340 + (i as i32 & 1) } else { 2 }).collect();
            let mut e = vec![];
            let want = map_ref(&a3, &b3, &|x, y, e| { let p = mul_ev(x, y, 0, e); Some(add_ev(p, x, 1, e)) }, &mut e);
            let mut out = vec![0i32; n]; w_map_muladd(bb(&a3), bb(&b3), &mut out);
            t.check(&format!("rescan map_muladd {pname} n={n}"), out, want, &e, true);
            // conditional check: overflows at odd x are not checked
            let a4: Vec<i32> = (0..n).map(|i| 1000 + i as i32).collect();
            let mut e = vec![];
            let want: Vec<i32> = a4.iter().zip(&b).map(|(&x, &y)| if x & 1 == 0 { mul_ev(x, y, 0, &mut e) } else { 0 }).collect();
            let mut out = vec![0i32; n]; w_map_mul_cond(bb(&a4), bb(&b), &mut out);
            t.check(&format!("rescan map_mul_cond {pname} n={n}"), out, want, &e, true);
        }
        // early exits: x == stop at iteration s; overflows before s, at s and after s
        for s in [0usize, 1, n / 2, n - 1] {
            for ovs in [vec![s], vec![s + 1], vec![s, s + 1], vec![s.saturating_sub(1), s, s + 2], vec![0, s]] {
                let a: Vec<i32> = (0..n).map(|i| if i == s { -777 } else { 1000 + (i as i32 % 7) }).collect();
                let b: Vec<i32> = (0..n).map(|i| if ovs.contains(&i) { 10_000_000 } else { 5 }).collect();
                for upto in [false, true] {
                    let mut e = vec![]; let mut want = vec![0i32; n]; let mut ret = n;
                    for i in 0..n {
                        if !upto && a[i] == -777 { ret = i; break; }
                        want[i] = mul_ev(a[i], b[i], 0, &mut e);
                        if upto && a[i] == -777 { ret = i; break; }
                    }
                    let mut out = vec![0i32; n];
                    let r = if upto { w_mul_upto(bb(&a), bb(&b), &mut out, bb(-777)) } else { w_mul_until(bb(&a), bb(&b), &mut out, bb(-777)) };
                    t.check(&format!("rescan {} stop={s} ov={ovs:?} n={n}", if upto { "mul_upto" } else { "mul_until" }), (r, out), (ret, want), &e, true);
                }
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(|s| s.as_str()) == Some("gather") { gather_child(); return; }
    if args.get(1).map(|s| s.as_str()) == Some("gather_mul") { gather_mul_child(); return; }
    let mode = args.get(1).cloned().unwrap_or("none".into());
    let mut t = T { pass: 0, fail: 0, mode };
    use std::hint::black_box as bb;

    for (n, seed) in [(0usize, 1u32), (1, 2), (100, 3), (1000, 4), (4099, 5)] {
        let v = lcg(n, seed);
        // u8 sum
        let (mut s, mut e) = (0u8, vec![]);
        for &b in &v { let (r, o) = s.overflowing_add(b); if o { e.push((0, ev("add", s as i128, b as i128))); } s = r; }
        t.check(&format!("sum_u8 n={n}"), w_sum_u8(bb(&v)), s, &e, true);
        // u32 sum of a large-valued input does not overflow; check the value
        let want: u32 = v.iter().fold(0u32, |a, &b| a.wrapping_add(b as u32));
        t.check(&format!("sum_u32 n={n}"), w_sum_u32(bb(&v)), want, &[], true);
        // owned copy, u16 (invoke under unwind)
        let v2: Vec<u8> = v.iter().map(|&b| b | 0x80).collect();
        let (mut s, mut e) = (0u16, vec![]);
        for &b in &v2 { let (r, o) = s.overflowing_add(b as u16); if o { e.push((0, ev("add", s as i128, b as i128))); } s = r; }
        t.check(&format!("sum_owned n={n}"), w_sum_owned(bb(&v2)), s, &e, true);
        // adler with a huge nmax: b overflows
        let (mut a, mut b, mut e) = (1u32, 0u32, vec![]);
        let big: Vec<u8> = v.iter().map(|_| 255u8).collect();
        for &x in &big {
            let (r, o) = a.overflowing_add(x as u32); if o { e.push((0, ev("add", a as i128, x as i128))); } a = r;
            let (r, o) = b.overflowing_add(a); if o { e.push((1, ev("add", b as i128, a as i128))); } b = r;
        }
        let want = ((b % 65521) << 16) | (a % 65521);
        t.check(&format!("adler nmax=inf n={n}"), w_adler(bb(&big), usize::MAX), want, &e, true);
        // histogram u8 counts
        let hv: Vec<u8> = v.iter().map(|&b| b % 3).collect();
        let mut c = vec![0u8; 256]; let mut e = vec![];
        for &b in &hv { let (r, o) = c[b as usize].overflowing_add(1); if o { e.push((0, ev("add", c[b as usize] as i128, 1))); } c[b as usize] = r; }
        let want = c.iter().map(|&c| c as u32).fold(0u32, |a, c| a.wrapping_mul(31).wrapping_add(c));
        t.check(&format!("hist_owned n={n}"), w_hist_owned(bb(&hv)), want, &e, true);
        // dot product
        let a: Vec<i32> = v.iter().map(|&b| (b as i32 - 128) * 40000).collect();
        let b2: Vec<i32> = v.iter().rev().map(|&b| (b as i32 - 100) * 3).collect();
        let (mut s, mut e) = (0i32, vec![]);
        for (x, y) in a.iter().zip(&b2) {
            let (p, o) = x.overflowing_mul(*y); if o { e.push((0, ev("mul", *x as i128, *y as i128))); }
            let (r, o) = s.overflowing_add(p); if o { e.push((1, ev("add", s as i128, p as i128))); } s = r;
        }
        t.check(&format!("dot n={n}"), w_dot(bb(&a), bb(&b2)), s, &e, true);
        // map mul
        let mut out = vec![0i32; a.len()]; let mut e = vec![];
        let want: Vec<i32> = a.iter().zip(&b2).map(|(x, y)| { let (p, o) = x.overflowing_mul(*y); if o { e.push((0, ev("mul", *x as i128, *y as i128))); } p }).collect();
        w_map_mul(bb(&a), bb(&b2), &mut out);
        t.check(&format!("map_mul n={n}"), out, want, &e, true);
        // early return
        for stop in [7u8, 255, 0] {
            let w: Vec<u8> = v.iter().map(|&b| b | 1).collect();
            let (mut s, mut e, mut ret) = (0u32, vec![], (0, w.len()));
            let mut done = false;
            for (i, &b) in w.iter().enumerate() {
                let (tt, o) = (b as u32).overflowing_mul(0x0200_0000); if o { e.push((0, ev("mul", b as i128, 0x0200_0000))); }
                let (r, o) = s.overflowing_add(tt); if o { e.push((1, ev("add", s as i128, tt as i128))); } s = r;
                if b == stop { ret = (s, i); done = true; break; }
            }
            if !done { ret = (s, w.len()); }
            t.check(&format!("break stop={stop} n={n}"), w_break(bb(&w), stop), ret, &e, true);
        }
        // call: must not be merged
        let (mut s, mut e) = (0u8, vec![]);
        for &b in &v { let (r, o) = s.overflowing_add(b); if o { e.push((0, ev("add", s as i128, b as i128))); } s = r; }
        t.check(&format!("call (not merged) n={n}"), w_call(bb(&v)), s, &e, false);
    }
    // collatz: must not be merged
    for x in [27u32, 97, 871, 0x7fff_ffff] {
        let (mut y, mut steps, mut e) = (x, 0u8, vec![]);
        while y != 1 {
            y = if y % 2 == 0 { y / 2 } else {
                let (p, o) = y.overflowing_mul(3); if o { e.push((0, ev("mul", 3, y as i128))); }
                let (q, o2) = p.overflowing_add(1); if o2 { e.push((1, ev("add", p as i128, 1))); } q };
            let (r, o) = steps.overflowing_add(1); if o { e.push((2, ev("add", steps as i128, 1))); } steps = r;
            if e.len() > 100000 { break; }
        }
        if e.len() <= 100000 { t.check(&format!("collatz (not merged) x={x}"), w_collatz(bb(x)), steps, &e, false); }
    }
    // order: report before the bounds-check panic
    let out = std::process::Command::new(std::env::current_exe().unwrap()).arg("gather").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("REPORT") || l.starts_with("PANIC") || l.starts_with("RETURNED")).collect();
    let first = match t.mode.as_str() { "b" => "REPORT add 88 200", "c" | "d" => "REPORT add", _ => "REPORT add 200 200" };
    let ok = lines.first().map_or(false, |l| l.starts_with(first)) && lines.last() == Some(&"PANIC")
        && lines.iter().filter(|l| l.starts_with("REPORT")).count() == if t.mode == "none" { 3 } else { 1 };
    if ok { t.pass += 1; println!("PASS gather: report(s) before the bounds-check panic: {:?}", lines); }
    else { t.fail += 1; println!("FAIL gather: {:?}", lines); }
    // order: report (first overflow, element 1) before the bounds-check panic at element 4
    let out = std::process::Command::new(std::env::current_exe().unwrap()).arg("gather_mul").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("REPORT") || l.starts_with("PANIC") || l.starts_with("RETURNED")).collect();
    let first = match t.mode.as_str() { "b" => "REPORT mul 3200000 1000", "c" | "d" => "REPORT mul", _ => "REPORT mul 3000000 1000" };
    let ok = lines.first().map_or(false, |l| l.starts_with(first)) && lines.last() == Some(&"PANIC")
        && lines.iter().filter(|l| l.starts_with("REPORT")).count() == if t.mode == "none" { 3 } else { 1 };
    if ok { t.pass += 1; println!("PASS gather_mul: report(s) before the bounds-check panic: {:?}", lines); }
    else { t.fail += 1; println!("FAIL gather_mul: {:?}", lines); }
    rescan_tests(&mut t);
    println!("{} passed, {} failed", t.pass, t.fail);
    std::process::exit(if t.fail == 0 { 0 } else { 1 });
}
