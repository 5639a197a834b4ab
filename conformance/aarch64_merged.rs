//! Merged overflow reports in loops on `aarch64-unknown-none`, run under `qemu-aarch64`.
//!
//! The harness compiles this program against the `core` that it builds for
//! `aarch64-unknown-none` in report mode (see `aarch64_no_std.rs`), links it with `ld.lld` into
//! a static Linux executable (its own `_start`, the `write` and `exit_group` system calls) and
//! runs it under `qemu-aarch64`. The target has vector registers (NEON), so at opt-level 2, with
//! `-Zmerge-overflow-reports`, the compiler merges the reports of the loops that qualify, as on
//! x86_64 (see `merged.rs`, whose cases these are a part of): with `--cfg merged_reports`, an
//! element-wise loop reports once per exit with its first overflow's operands, after the loop
//! wrote what it writes, and so does an unsigned sum of `u16`s; a `u8` sum of bytes reports each
//! overflow in place. Without the cfg (opt-level 0, where the flag merges nothing), every loop
//! reports in place.
//!
//! The handler records each report's operation, operands, line and, while a case watches a
//! buffer, how many of its elements were written. Each case compares the values with
//! `overflowing_*` and the reports with a model of the loop. Prints `PASS name` or `FAIL name:
//! why` per check and `N passed, N failed` last, and exits with 1 if a check failed (101 on a
//! panic).

#![no_std]
#![no_main]
#![feature(integer_overflow_report)]

use core::arch::{asm, global_asm};
use core::cell::UnsafeCell;
use core::fmt::{self, Write};
use core::hint::black_box as bb;
use core::panic::{IntegerOverflow, OverflowOp as Op, PanicInfo};

/// Whether the loops that qualify must have their reports merged in this build.
const MERGING: bool = cfg!(merged_reports);

// The entry point: Linux starts the program here with `sp` aligned; `start`'s result is the
// exit status.
global_asm!(
    ".globl _start",
    "_start:",
    "mov x29, #0",
    "mov x30, #0",
    "bl {start}",
    "mov x8, #94", // exit_group
    "svc #0",
    start = sym start,
);

/// `write(1, text)`, all of it.
fn write_stdout(mut text: &[u8]) {
    while !text.is_empty() {
        let written: isize;
        // SAFETY: `write` (64) reads `text`, which is valid for its length.
        unsafe {
            asm!(
                "svc #0",
                inlateout("x0") 1isize => written,
                in("x1") text.as_ptr(),
                in("x2") text.len(),
                in("x8") 64,
                options(nostack),
            );
        }
        if written <= 0 {
            exit(2);
        }
        text = &text[written as usize..];
    }
}

fn exit(status: i32) -> ! {
    // SAFETY: `exit_group` (94) does not return.
    unsafe {
        asm!("svc #0", in("x0") status, in("x8") 94, options(noreturn, nostack));
    }
}

// The memory functions that LLVM calls, which the empty `compiler_builtins` does not have.
// Volatile accesses keep LLVM from making these loops calls to themselves, and the index
// arithmetic wraps, so that they have no overflow checks.

/// # Safety
/// As C's `memcpy`.
#[unsafe(no_mangle)]
unsafe extern "C" fn memcpy(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    let mut i = 0;
    while i < n {
        // SAFETY: the caller's.
        unsafe { dest.add(i).write_volatile(src.add(i).read_volatile()) };
        i = i.wrapping_add(1);
    }
    dest
}

/// # Safety
/// As C's `memmove`.
#[unsafe(no_mangle)]
unsafe extern "C" fn memmove(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dest as usize) <= (src as usize) {
        // SAFETY: the caller's; copying forwards reads each byte before it is overwritten.
        return unsafe { memcpy(dest, src, n) };
    }
    let mut i = n;
    while i > 0 {
        i = i.wrapping_sub(1);
        // SAFETY: the caller's.
        unsafe { dest.add(i).write_volatile(src.add(i).read_volatile()) };
    }
    dest
}

/// # Safety
/// As C's `memset`.
#[unsafe(no_mangle)]
unsafe extern "C" fn memset(dest: *mut u8, c: i32, n: usize) -> *mut u8 {
    let mut i = 0;
    while i < n {
        // SAFETY: the caller's.
        unsafe { dest.add(i).write_volatile(c as u8) };
        i = i.wrapping_add(1);
    }
    dest
}

/// # Safety
/// As C's `memcmp`.
#[unsafe(no_mangle)]
unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i < n {
        // SAFETY: the caller's.
        let (x, y) = unsafe { (a.add(i).read_volatile(), b.add(i).read_volatile()) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i = i.wrapping_add(1);
    }
    0
}

/// # Safety
/// As C's `bcmp`.
#[unsafe(no_mangle)]
unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's.
    unsafe { memcmp(a, b, n) }
}

/// Standard output, for `write!`.
struct Out;

impl Write for Out {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        write_stdout(s.as_bytes());
        Ok(())
    }
}

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    let _ = writeln!(Out, "panicked: {info}");
    exit(101)
}

/// A single-threaded program's global state.
struct Global<T>(UnsafeCell<T>);

// SAFETY: the program has one thread, and nothing holds a reference from `get` across a call
// that could use it again.
unsafe impl<T> Sync for Global<T> {}

impl<T> Global<T> {
    const fn new(value: T) -> Global<T> {
        Global(UnsafeCell::new(value))
    }

    #[allow(clippy::mut_from_ref)]
    fn get(&self) -> &mut T {
        // SAFETY: see `Sync`.
        unsafe { &mut *self.0.get() }
    }
}

/// One report: what the handler records, and what a model expects.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Event {
    op: Op,
    lhs: i128,
    /// 0 for a negation.
    rhs: i128,
    line: u32,
    /// How many elements of the watched buffer were written, if one was watched.
    written: Option<usize>,
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?}({}, {}) at line {}",
            self.op, self.lhs, self.rhs, self.line
        )?;
        match self.written {
            Some(written) => write!(f, " after {written} writes"),
            None => Ok(()),
        }
    }
}

const CAPACITY: usize = 32;

/// A list of events that keeps the first `CAPACITY` and counts them all.
#[derive(Clone, Copy)]
struct Events {
    events: [Option<Event>; CAPACITY],
    len: usize,
}

impl Events {
    const fn new() -> Events {
        Events {
            events: [None; CAPACITY],
            len: 0,
        }
    }

    fn push(&mut self, event: Event) {
        if self.len < CAPACITY {
            self.events[self.len] = Some(event);
        }
        self.len += 1;
    }

    /// How these events differ from `want`, if they do.
    fn compare(&self, want: &Events) -> Option<Mismatch> {
        if self.len != want.len {
            return Some(Mismatch::Count {
                got: self.len,
                want: want.len,
                first: self.events[0],
            });
        }
        let n = self.len.min(CAPACITY);
        let i = (0..n).find(|&i| self.events[i] != want.events[i])?;
        Some(Mismatch::At {
            i,
            got: self.events[i]?,
            want: want.events[i]?,
        })
    }
}

enum Mismatch {
    Count {
        got: usize,
        want: usize,
        first: Option<Event>,
    },
    At {
        i: usize,
        got: Event,
        want: Event,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Count { got, want, first } => {
                write!(f, "{got} reports, want {want}")?;
                match first {
                    Some(first) => write!(f, " (the first is {first})"),
                    None => Ok(()),
                }
            }
            Mismatch::At { i, got, want } => write!(f, "report {i} is {got}, want {want}"),
        }
    }
}

static REPORTS: Global<Events> = Global::new(Events::new());

/// The watched buffer: its address and length (null if none). Its unwritten elements hold
/// `UNWRITTEN`.
static WATCHED: Global<(*const u32, usize)> = Global::new((core::ptr::null(), 0));
const UNWRITTEN: u32 = 0xdead_beef;

fn value(v: core::panic::IntegerValue) -> i128 {
    v.to_i128()
        .unwrap_or_else(|| v.to_u128().unwrap_or(0) as i128)
}

/// The handler under test.
#[core::panic::report_integer_overflow]
fn record(overflow: &IntegerOverflow) {
    let (buffer, len) = *WATCHED.get();
    // SAFETY: `watched` sets a buffer of `len` elements that only raw pointers write.
    let written = (!buffer.is_null())
        .then(|| (0..len).filter(|&i| unsafe { buffer.add(i).read_volatile() } != UNWRITTEN))
        .map(Iterator::count);
    REPORTS.get().push(Event {
        op: overflow.op(),
        lhs: value(overflow.lhs()),
        rhs: overflow.rhs().map_or(0, value),
        line: overflow.location().line(),
        written,
    });
}

/// The line of the operation after the marker `/*@tag*/` in this file (a marker before a
/// statement is on a line of its own).
fn line(tag: &str) -> u32 {
    let source = include_str!("aarch64_merged.rs");
    let mut marker = [0u8; 64];
    let len = tag.len() + 5;
    marker[..3].copy_from_slice(b"/*@");
    marker[3..3 + tag.len()].copy_from_slice(tag.as_bytes());
    marker[3 + tag.len()..len].copy_from_slice(b"*/");
    let marker = core::str::from_utf8(&marker[..len]).unwrap();
    let at = source
        .find(marker)
        .unwrap_or_else(|| panic!("no marker {marker}"));
    // The operation is after the marker and any whitespace, maybe on the next line.
    let after = &source[at + len..];
    let at = at + len + (after.len() - after.trim_start().len());
    source[..at].bytes().filter(|&b| b == b'\n').count() as u32 + 1
}

/// The reports a loop must make: each overflow at once, or if merged, the first overflow of
/// each site (by index) at the exit, in the order of the sites.
struct Model {
    merged: bool,
    pending: [Option<Event>; 2],
    want: Events,
    overflows: usize,
    /// Elements of the watched buffer written so far, if one is watched.
    written: Option<usize>,
}

impl Model {
    fn new(merged: bool) -> Model {
        Model {
            merged,
            pending: [None; 2],
            want: Events::new(),
            overflows: 0,
            written: None,
        }
    }

    fn report(&mut self, site: usize, op: Op, lhs: i128, rhs: i128, line: u32) {
        self.overflows += 1;
        let event = Event {
            op,
            lhs,
            rhs,
            line,
            written: self.written,
        };
        if self.merged {
            self.pending[site].get_or_insert(event);
        } else {
            self.want.push(event);
        }
    }

    fn add_u32(&mut self, site: usize, line: u32, a: u32, b: u32) -> u32 {
        let (result, overflows) = a.overflowing_add(b);
        if overflows {
            self.report(site, Op::Add, a.into(), b.into(), line);
        }
        result
    }

    fn add_u8(&mut self, site: usize, line: u32, a: u8, b: u8) -> u8 {
        let (result, overflows) = a.overflowing_add(b);
        if overflows {
            self.report(site, Op::Add, a.into(), b.into(), line);
        }
        result
    }

    fn mul_i32(&mut self, site: usize, line: u32, a: i32, b: i32) -> i32 {
        let (result, overflows) = a.overflowing_mul(b);
        if overflows {
            self.report(site, Op::Mul, a.into(), b.into(), line);
        }
        result
    }

    fn exit(&mut self) {
        for pending in &mut self.pending {
            if let Some(mut event) = pending.take() {
                event.written = self.written;
                self.want.push(event);
            }
        }
    }
}

#[derive(Default)]
struct Checks {
    passed: usize,
    failed: usize,
}

impl Checks {
    /// Checks that the values were right (`wrong` is the index of the first wrong one), that
    /// the inputs overflowed as the case meant (`inputs_ok`), and that the reports since the
    /// last check are the model's.
    fn expect(
        &mut self,
        name: fmt::Arguments,
        wrong: Option<usize>,
        model: &Model,
        inputs_ok: bool,
    ) {
        let got = core::mem::replace(REPORTS.get(), Events::new());
        let mut out = Out;
        let _ = if !inputs_ok {
            self.failed += 1;
            writeln!(
                out,
                "FAIL {name}: the inputs overflow {} times (a bug of this program)",
                model.overflows
            )
        } else if let Some(i) = wrong {
            self.failed += 1;
            writeln!(out, "FAIL {name}: value {i} is not the wrapped one")
        } else if let Some(why) = got.compare(&model.want) {
            self.failed += 1;
            writeln!(out, "FAIL {name}: {why}")
        } else {
            self.passed += 1;
            writeln!(out, "PASS {name}")
        };
    }
}

/// The index of the first element of `got` that is not `want`'s.
fn first_difference<T: PartialEq>(got: &[T], want: &[T]) -> Option<usize> {
    got.iter().zip(want).position(|(g, w)| g != w)
}

const MAX: usize = 1003;

#[inline(never)]
fn add_u32(a: &[u32], b: &[u32], out: &mut [u32]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = /*@add_u32*/ x + y;
    }
}

/// `add_u32` into a buffer that the handler watches.
///
/// # Safety
/// `out` is valid for writes of `a.len()` elements and overlaps neither `a` nor `b`.
#[inline(never)]
unsafe fn add_watched(a: &[u32], b: &[u32], out: *mut u32) {
    let n = a.len().min(b.len());
    for i in 0..n {
        // SAFETY: `i < a.len()`, for which the caller made `out` valid.
        unsafe {
            out.add(i).write(/*@add_watched*/ a[i] + b[i])
        };
    }
}

#[inline(never)]
fn mul_break(a: &[i32], b: &[i32], out: &mut [i32], stop: i32) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = /*@mul_break*/ x * y;
        if x == stop {
            break;
        }
    }
}

#[inline(never)]
fn sum_u8(a: &[u8]) -> u8 {
    let mut sum = 0;
    for &x in a {
        /*@sum_u8*/
        sum += x;
    }
    sum
}

#[inline(never)]
fn sum_u16(a: &[u16], start: u32) -> u32 {
    let mut sum = start;
    for &x in a {
        /*@sum_u16*/
        sum += x as u32;
    }
    sum
}

/// The inputs of an element-wise `u32` addition of `n` elements that overflows at `places`.
fn inputs(n: usize, places: &[usize]) -> ([u32; MAX], [u32; MAX]) {
    let (mut a, mut b) = ([0; MAX], [0; MAX]);
    for i in 0..n {
        (a[i], b[i]) = match places.contains(&i) {
            true => (u32::MAX - i as u32 % 5, 100 + i as u32),
            false => (i as u32, 3),
        };
    }
    (a, b)
}

fn elementwise(t: &mut Checks) {
    let (at, at_watched) = (line("add_u32"), line("add_watched"));
    for n in [1, 7, 64, MAX] {
        let several = [n / 4, n / 2, n - 1];
        let places: [(&str, &[usize]); 5] = [
            ("none", &[]),
            ("first", &[0]),
            ("middle", &[n / 2]),
            ("last", &[n - 1]),
            ("several", if n > 2 { &several } else { &[] }),
        ];
        for (place, positions) in places {
            if place == "several" && n <= 2 {
                continue;
            }
            let (a, b) = inputs(n, positions);
            let count = positions.len();

            let mut model = Model::new(MERGING);
            let mut want = [0; MAX];
            for i in 0..n {
                want[i] = model.add_u32(0, at, a[i], b[i]);
            }
            model.exit();
            let mut out = [0; MAX];
            add_u32(bb(&a[..n]), bb(&b[..n]), &mut out[..n]);
            let wrong = first_difference(&out[..n], &want[..n]);
            let ok = model.overflows == count;
            t.expect(format_args!("add_u32_{place}_n{n}"), wrong, &model, ok);

            // The same, watched: the reports show how far the loop had come.
            let mut model = Model::new(MERGING);
            let mut want = [UNWRITTEN; MAX];
            for i in 0..n {
                model.written = Some(i);
                want[i] = model.add_u32(0, at_watched, a[i], b[i]);
            }
            model.written = Some(n);
            model.exit();
            let mut out = [UNWRITTEN; MAX];
            *WATCHED.get() = (out.as_ptr(), n);
            // SAFETY: `out` has at least `n` elements and is another array than `a` and `b`.
            unsafe { add_watched(bb(&a[..n]), bb(&b[..n]), bb(out.as_mut_ptr())) };
            *WATCHED.get() = (core::ptr::null(), 0);
            let wrong = first_difference(&out[..n], &want[..n]);
            let ok = model.overflows == count;
            t.expect(format_args!("when_{place}_n{n}"), wrong, &model, ok);
        }
    }
}

/// `break` after the element `stop`, with overflows before it, at it and after it (not
/// reported).
fn early_exit(t: &mut Checks) {
    const STOP: i32 = -777;
    let at = line("mul_break");
    let n = 64;
    for stop in [0, 31, 63] {
        let sets: [(&str, &[usize]); 4] = [
            ("at", &[stop]),
            ("before_and_at", &[0, stop]),
            ("after", &[stop + 1]),
            ("before_and_after", &[0, stop + 1]),
        ];
        for (name, overflows) in sets {
            if stop == 0 && name.starts_with("before") {
                continue;
            }
            let (mut a, mut b) = ([0i32; 64], [0i32; 64]);
            for i in 0..n {
                a[i] = if i == stop { STOP } else { 1000 + i as i32 % 7 };
                b[i] = if overflows.contains(&i) {
                    10_000_000 + i as i32
                } else {
                    5
                };
            }
            let mut model = Model::new(MERGING);
            let mut want = [0; 64];
            for i in 0..=stop {
                want[i] = model.mul_i32(0, at, a[i], b[i]);
            }
            model.exit();
            let mut out = [0; 64];
            mul_break(bb(&a), bb(&b), &mut out, bb(STOP));
            let wrong = first_difference(&out, &want);
            let count = overflows.iter().filter(|&&i| i <= stop).count();
            let ok = model.overflows == count;
            t.expect(format_args!("break_{name}_stop{stop}"), wrong, &model, ok);
        }
    }
}

/// An accumulator is not merged: each overflow reports in place.
fn accumulator(t: &mut Checks) {
    let at = line("sum_u8");
    for n in [7, 20] {
        let mut a = [0u8; 20];
        for (i, x) in a.iter_mut().enumerate() {
            *x = 100 + (i * 37 % 100) as u8;
        }
        let mut model = Model::new(false);
        let want = a[..n].iter().fold(0, |s, &x| model.add_u8(0, at, s, x));
        let got = sum_u8(bb(&a[..n]));
        let wrong = (got != want).then_some(0);
        let ok = model.overflows >= 2;
        t.expect(format_args!("accumulator_n{n}"), wrong, &model, ok);
    }
}

/// Room for a run of `sum_u16` longer than 65537 elements.
static LONG: Global<[u16; 200_000]> = Global::new([0; 200_000]);

/// An unsigned sum of `u16`s wraps at most once in 65537 of them: a shorter run's check leaves
/// the loop, a longer one is rescanned after it. Merged, its first overflow reports at the exit.
fn sums(t: &mut Checks) {
    let at = line("sum_u16");
    for (name, n, fill, start, count) in [
        ("short_none", 64, 1000u16, 0u32, 0),
        ("short_one", 64, 1000, u32::MAX - 31_500, 1),
        ("long_none", 200_000, 1, 0, 0),
        ("long_three", 200_000, u16::MAX, 0, 3),
    ] {
        let a = &mut LONG.get()[..n];
        a.fill(fill);
        let mut model = Model::new(MERGING);
        let want = a
            .iter()
            .fold(start, |s, &x| model.add_u32(0, at, s, x.into()));
        model.exit();
        let got = sum_u16(bb(a), bb(start));
        let wrong = (got != want).then_some(0);
        let ok = model.overflows == count;
        t.expect(format_args!("sum_u16_{name}"), wrong, &model, ok);
    }
}

extern "C" fn start() -> i32 {
    let _ = writeln!(Out, "merged reports expected: {MERGING}");
    let mut t = Checks::default();
    elementwise(&mut t);
    early_exit(&mut t);
    accumulator(&mut t);
    sums(&mut t);
    let _ = writeln!(Out, "{} passed, {} failed", t.passed, t.failed);
    i32::from(t.failed > 0)
}
