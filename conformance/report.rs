//! Conformance of `-Coverflow-checks=report` with a handler that records every report.
//!
//! The harness compiles this file with `rustc --edition 2024 -Coverflow-checks=report` at
//! opt-levels 0, 2, 3 and 3 with fat LTO, and runs it. Every overflowing `+`, `-`, `*`, `<<`,
//! `>>`, unary `-` and compound assignment, and every check that `core` inherits through
//! `#[rustc_inherit_overflow_checks]`, must call the handler exactly once with its operation
//! and the location that `-Coverflow-checks=on` would panic at, and then continue with the
//! wrapped value. Operations that do not overflow must not report; division and bounds checks
//! must still panic.
//!
//! The expected location of an operation in this file is found from a marker comment
//! `/*@tag*/` right before it: the operation's span starts there (at the left operand of a
//! binary operation or compound assignment, at the `-` of a negation). Locations in `core` are
//! the constants in `common.rs`. Prints one line per check and `N passed, N failed` last.

#![feature(integer_overflow_report)]

mod common;

use core::panic::{Location, OverflowOp as Op};
use std::fmt::{self, Debug};
use std::hint::black_box as bb;
use std::ops::{Add, AddAssign, Mul, Neg, Shl, ShlAssign, Shr, Sub};
use std::process::ExitCode;
use std::sync::{Mutex, PoisonError};

use common::{Caught, Checks, Site, catch};

/// The text of this file, to find the `/*@tag*/` markers in.
const SOURCE: &str = include_str!("report.rs");

/// One call of the handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Report {
    op: Op,
    file: &'static str,
    line: u32,
    col: u32,
}

impl Report {
    fn is(&self, op: Op, site: Site) -> bool {
        self.op == op && site.matches(self.file, self.line, self.col)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} at {}:{}:{}",
            self.op, self.file, self.line, self.col
        )
    }
}

static REPORTS: Mutex<Vec<Report>> = Mutex::new(Vec::new());

/// The handler under test: records the report and returns.
#[core::panic::report_integer_overflow]
fn record(op: Op, location: &'static Location<'static>) {
    let report = Report {
        op,
        file: location.file(),
        line: location.line(),
        col: location.column(),
    };
    REPORTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(report);
}

/// The reports since the last call, in the order they were made.
fn take() -> Vec<Report> {
    std::mem::take(&mut *REPORTS.lock().unwrap_or_else(PoisonError::into_inner))
}

/// The site of the operation after the marker `/*@tag*/` in this file.
fn site(tag: &str) -> Site {
    common::marked(file!(), SOURCE, tag)
}

fn list<T: fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let items: Vec<String> = items.into_iter().map(|i| i.to_string()).collect();
    format!("[{}]", items.join(", "))
}

struct Tester {
    checks: Checks,
}

impl Tester {
    /// `got` came from one overflowing `op` marked `/*@name*/`: it is `want`, and the reports
    /// since the last check are exactly one, of `op` at that marker.
    fn one<V: PartialEq + Debug>(&mut self, name: &str, got: V, want: V, op: Op) {
        self.at(name, got, want, &[(op, site(name))]);
    }

    /// `got` is `want`, and the reports since the last check are exactly `expected`, in order.
    fn at<V: PartialEq + Debug>(&mut self, name: &str, got: V, want: V, expected: &[(Op, Site)]) {
        let reports = take();
        let ok = got == want
            && reports.len() == expected.len()
            && reports
                .iter()
                .zip(expected)
                .all(|(r, &(op, site))| r.is(op, site));
        self.checks.check(name, ok, || {
            let expected = expected
                .iter()
                .map(|(op, site)| format!("{op:?} at {site}"));
            format!(
                "got {got:?} with reports {}, want {want:?} with reports {}",
                list(&reports),
                list(expected)
            )
        });
    }

    /// Nothing overflowed: `got` is `want` and nothing was reported since the last check.
    fn none<V: PartialEq + Debug>(&mut self, name: &str, got: V, want: V) {
        self.at(name, got, want, &[]);
    }

    /// A run of `count` (at least one) overflowing operations, `wrong` of which gave another
    /// result than the `wrapping_*` method: none may be wrong, and the reports since the last
    /// check must be `count`, all of `op` at `site`.
    fn many(&mut self, name: &str, wrong: usize, count: usize, op: Op, site: Site) {
        let reports = take();
        let stray = reports.iter().find(|r| !r.is(op, site));
        let ok = wrong == 0 && count > 0 && reports.len() == count && stray.is_none();
        self.checks.check(name, ok, || {
            let stray = stray.map_or(String::new(), |r| format!(", one of them {r}"));
            format!(
                "{wrong} wrong results; {} reports{stray}; want {count} reports of {op:?} at {site}",
                reports.len()
            )
        });
    }

    /// `result` is a panic with `message` at the marker `/*@name*/`, and nothing was reported.
    fn panics<R: Debug>(&mut self, name: &str, result: Result<R, Caught>, message: &str) {
        let reports = take();
        if reports.is_empty() {
            self.checks.panicked(name, result, message, site(name));
        } else {
            self.checks.check(name, false, || {
                format!("reported {} before panicking", list(&reports))
            });
        }
    }
}

fn main() -> ExitCode {
    common::install_panic_hook();
    let mut t = Tester {
        checks: Checks::default(),
    };
    t.none("nothing_at_startup", (), ());
    messages(&mut t);
    operators(&mut t);
    compound_assignments(&mut t);
    no_overflow(&mut t);
    several_in_one_expression(&mut t);
    exhaustive_8_bit(&mut t);
    shifts(&mut t);
    generic(&mut t);
    inherited(&mut t);
    loops(&mut t);
    gvn_and_range_propagation(&mut t);
    still_panics(&mut t);
    t.none("nothing_left", (), ());
    t.checks.finish()
}

/// `OverflowOp::message()` and its `Display`.
fn messages(t: &mut Tester) {
    let all = [
        (Op::Add, "attempt to add with overflow"),
        (Op::Sub, "attempt to subtract with overflow"),
        (Op::Mul, "attempt to multiply with overflow"),
        (Op::Neg, "attempt to negate with overflow"),
        (Op::Shl, "attempt to shift left with overflow"),
        (Op::Shr, "attempt to shift right with overflow"),
    ];
    for (op, message) in all {
        t.checks
            .eq(&format!("message_{op:?}"), op.message(), message);
        t.checks.eq(
            &format!("display_{op:?}"),
            op.to_string(),
            message.to_string(),
        );
    }
}

/// Every operator on every integer type, overflowing once.
#[rustfmt::skip]
fn operators(t: &mut Tester) {
    // i8
    t.one("add_i8", /*@add_i8*/ bb(i8::MAX) + bb(1), i8::MAX.wrapping_add(1), Op::Add);
    t.one("sub_i8", /*@sub_i8*/ bb(i8::MIN) - bb(1), i8::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_i8", /*@mul_i8*/ bb(i8::MAX) * bb(3), i8::MAX.wrapping_mul(3), Op::Mul);
    t.one("mul_min_i8", /*@mul_min_i8*/ bb(i8::MIN) * bb(-1), i8::MIN.wrapping_mul(-1), Op::Mul);
    t.one("neg_i8", /*@neg_i8*/ -bb(i8::MIN), i8::MIN.wrapping_neg(), Op::Neg);
    t.one("shl_i8", /*@shl_i8*/ bb::<i8>(1) << bb(i8::BITS), 1i8.wrapping_shl(i8::BITS), Op::Shl);
    t.one("shr_i8", /*@shr_i8*/ bb(i8::MAX) >> bb(i8::BITS + 1), i8::MAX.wrapping_shr(i8::BITS + 1), Op::Shr);
    // i16
    t.one("add_i16", /*@add_i16*/ bb(i16::MAX) + bb(1), i16::MAX.wrapping_add(1), Op::Add);
    t.one("sub_i16", /*@sub_i16*/ bb(i16::MIN) - bb(1), i16::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_i16", /*@mul_i16*/ bb(i16::MAX) * bb(3), i16::MAX.wrapping_mul(3), Op::Mul);
    t.one("mul_min_i16", /*@mul_min_i16*/ bb(i16::MIN) * bb(-1), i16::MIN.wrapping_mul(-1), Op::Mul);
    t.one("neg_i16", /*@neg_i16*/ -bb(i16::MIN), i16::MIN.wrapping_neg(), Op::Neg);
    t.one("shl_i16", /*@shl_i16*/ bb::<i16>(1) << bb(i16::BITS), 1i16.wrapping_shl(i16::BITS), Op::Shl);
    t.one("shr_i16", /*@shr_i16*/ bb(i16::MAX) >> bb(i16::BITS + 1), i16::MAX.wrapping_shr(i16::BITS + 1), Op::Shr);
    // i32
    t.one("add_i32", /*@add_i32*/ bb(i32::MAX) + bb(1), i32::MAX.wrapping_add(1), Op::Add);
    t.one("sub_i32", /*@sub_i32*/ bb(i32::MIN) - bb(1), i32::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_i32", /*@mul_i32*/ bb(i32::MAX) * bb(3), i32::MAX.wrapping_mul(3), Op::Mul);
    t.one("mul_min_i32", /*@mul_min_i32*/ bb(i32::MIN) * bb(-1), i32::MIN.wrapping_mul(-1), Op::Mul);
    t.one("neg_i32", /*@neg_i32*/ -bb(i32::MIN), i32::MIN.wrapping_neg(), Op::Neg);
    t.one("shl_i32", /*@shl_i32*/ bb::<i32>(1) << bb(i32::BITS), 1i32.wrapping_shl(i32::BITS), Op::Shl);
    t.one("shr_i32", /*@shr_i32*/ bb(i32::MAX) >> bb(i32::BITS + 1), i32::MAX.wrapping_shr(i32::BITS + 1), Op::Shr);
    // i64
    t.one("add_i64", /*@add_i64*/ bb(i64::MAX) + bb(1), i64::MAX.wrapping_add(1), Op::Add);
    t.one("sub_i64", /*@sub_i64*/ bb(i64::MIN) - bb(1), i64::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_i64", /*@mul_i64*/ bb(i64::MAX) * bb(3), i64::MAX.wrapping_mul(3), Op::Mul);
    t.one("mul_min_i64", /*@mul_min_i64*/ bb(i64::MIN) * bb(-1), i64::MIN.wrapping_mul(-1), Op::Mul);
    t.one("neg_i64", /*@neg_i64*/ -bb(i64::MIN), i64::MIN.wrapping_neg(), Op::Neg);
    t.one("shl_i64", /*@shl_i64*/ bb::<i64>(1) << bb(i64::BITS), 1i64.wrapping_shl(i64::BITS), Op::Shl);
    t.one("shr_i64", /*@shr_i64*/ bb(i64::MAX) >> bb(i64::BITS + 1), i64::MAX.wrapping_shr(i64::BITS + 1), Op::Shr);
    // i128
    t.one("add_i128", /*@add_i128*/ bb(i128::MAX) + bb(1), i128::MAX.wrapping_add(1), Op::Add);
    t.one("sub_i128", /*@sub_i128*/ bb(i128::MIN) - bb(1), i128::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_i128", /*@mul_i128*/ bb(i128::MAX) * bb(3), i128::MAX.wrapping_mul(3), Op::Mul);
    t.one("mul_min_i128", /*@mul_min_i128*/ bb(i128::MIN) * bb(-1), i128::MIN.wrapping_mul(-1), Op::Mul);
    t.one("neg_i128", /*@neg_i128*/ -bb(i128::MIN), i128::MIN.wrapping_neg(), Op::Neg);
    t.one("shl_i128", /*@shl_i128*/ bb::<i128>(1) << bb(i128::BITS), 1i128.wrapping_shl(i128::BITS), Op::Shl);
    t.one("shr_i128", /*@shr_i128*/ bb(i128::MAX) >> bb(i128::BITS + 1), i128::MAX.wrapping_shr(i128::BITS + 1), Op::Shr);
    // isize
    t.one("add_isize", /*@add_isize*/ bb(isize::MAX) + bb(1), isize::MAX.wrapping_add(1), Op::Add);
    t.one("sub_isize", /*@sub_isize*/ bb(isize::MIN) - bb(1), isize::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_isize", /*@mul_isize*/ bb(isize::MAX) * bb(3), isize::MAX.wrapping_mul(3), Op::Mul);
    t.one("mul_min_isize", /*@mul_min_isize*/ bb(isize::MIN) * bb(-1), isize::MIN.wrapping_mul(-1), Op::Mul);
    t.one("neg_isize", /*@neg_isize*/ -bb(isize::MIN), isize::MIN.wrapping_neg(), Op::Neg);
    t.one("shl_isize", /*@shl_isize*/ bb::<isize>(1) << bb(isize::BITS), 1isize.wrapping_shl(isize::BITS), Op::Shl);
    t.one("shr_isize", /*@shr_isize*/ bb(isize::MAX) >> bb(isize::BITS + 1), isize::MAX.wrapping_shr(isize::BITS + 1), Op::Shr);
    // u8
    t.one("add_u8", /*@add_u8*/ bb(u8::MAX) + bb(1), u8::MAX.wrapping_add(1), Op::Add);
    t.one("sub_u8", /*@sub_u8*/ bb(u8::MIN) - bb(1), u8::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_u8", /*@mul_u8*/ bb(u8::MAX) * bb(3), u8::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_u8", /*@shl_u8*/ bb::<u8>(1) << bb(u8::BITS), 1u8.wrapping_shl(u8::BITS), Op::Shl);
    t.one("shr_u8", /*@shr_u8*/ bb(u8::MAX) >> bb(u8::BITS + 1), u8::MAX.wrapping_shr(u8::BITS + 1), Op::Shr);
    // u16
    t.one("add_u16", /*@add_u16*/ bb(u16::MAX) + bb(1), u16::MAX.wrapping_add(1), Op::Add);
    t.one("sub_u16", /*@sub_u16*/ bb(u16::MIN) - bb(1), u16::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_u16", /*@mul_u16*/ bb(u16::MAX) * bb(3), u16::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_u16", /*@shl_u16*/ bb::<u16>(1) << bb(u16::BITS), 1u16.wrapping_shl(u16::BITS), Op::Shl);
    t.one("shr_u16", /*@shr_u16*/ bb(u16::MAX) >> bb(u16::BITS + 1), u16::MAX.wrapping_shr(u16::BITS + 1), Op::Shr);
    // u32
    t.one("add_u32", /*@add_u32*/ bb(u32::MAX) + bb(1), u32::MAX.wrapping_add(1), Op::Add);
    t.one("sub_u32", /*@sub_u32*/ bb(u32::MIN) - bb(1), u32::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_u32", /*@mul_u32*/ bb(u32::MAX) * bb(3), u32::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_u32", /*@shl_u32*/ bb::<u32>(1) << bb(u32::BITS), 1u32.wrapping_shl(u32::BITS), Op::Shl);
    t.one("shr_u32", /*@shr_u32*/ bb(u32::MAX) >> bb(u32::BITS + 1), u32::MAX.wrapping_shr(u32::BITS + 1), Op::Shr);
    // u64
    t.one("add_u64", /*@add_u64*/ bb(u64::MAX) + bb(1), u64::MAX.wrapping_add(1), Op::Add);
    t.one("sub_u64", /*@sub_u64*/ bb(u64::MIN) - bb(1), u64::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_u64", /*@mul_u64*/ bb(u64::MAX) * bb(3), u64::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_u64", /*@shl_u64*/ bb::<u64>(1) << bb(u64::BITS), 1u64.wrapping_shl(u64::BITS), Op::Shl);
    t.one("shr_u64", /*@shr_u64*/ bb(u64::MAX) >> bb(u64::BITS + 1), u64::MAX.wrapping_shr(u64::BITS + 1), Op::Shr);
    // u128
    t.one("add_u128", /*@add_u128*/ bb(u128::MAX) + bb(1), u128::MAX.wrapping_add(1), Op::Add);
    t.one("sub_u128", /*@sub_u128*/ bb(u128::MIN) - bb(1), u128::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_u128", /*@mul_u128*/ bb(u128::MAX) * bb(3), u128::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_u128", /*@shl_u128*/ bb::<u128>(1) << bb(u128::BITS), 1u128.wrapping_shl(u128::BITS), Op::Shl);
    t.one("shr_u128", /*@shr_u128*/ bb(u128::MAX) >> bb(u128::BITS + 1), u128::MAX.wrapping_shr(u128::BITS + 1), Op::Shr);
    // usize
    t.one("add_usize", /*@add_usize*/ bb(usize::MAX) + bb(1), usize::MAX.wrapping_add(1), Op::Add);
    t.one("sub_usize", /*@sub_usize*/ bb(usize::MIN) - bb(1), usize::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_usize", /*@mul_usize*/ bb(usize::MAX) * bb(3), usize::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_usize", /*@shl_usize*/ bb::<usize>(1) << bb(usize::BITS), 1usize.wrapping_shl(usize::BITS), Op::Shl);
    t.one("shr_usize", /*@shr_usize*/ bb(usize::MAX) >> bb(usize::BITS + 1), usize::MAX.wrapping_shr(usize::BITS + 1), Op::Shr);
}

/// Every compound assignment on every integer type, overflowing once.
#[rustfmt::skip]
fn compound_assignments(t: &mut Tester) {
    // i8
    t.one("add_assign_i8", { let mut x = bb(i8::MAX); /*@add_assign_i8*/ x += bb(1); x }, i8::MAX.wrapping_add(1), Op::Add);
    t.one("sub_assign_i8", { let mut x = bb(i8::MIN); /*@sub_assign_i8*/ x -= bb(1); x }, i8::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_assign_i8", { let mut x = bb(i8::MAX); /*@mul_assign_i8*/ x *= bb(3); x }, i8::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_assign_i8", { let mut x = bb::<i8>(1); /*@shl_assign_i8*/ x <<= bb(i8::BITS); x }, 1i8.wrapping_shl(i8::BITS), Op::Shl);
    t.one("shr_assign_i8", { let mut x = bb(i8::MAX); /*@shr_assign_i8*/ x >>= bb(i8::BITS + 1); x }, i8::MAX.wrapping_shr(i8::BITS + 1), Op::Shr);
    // i16
    t.one("add_assign_i16", { let mut x = bb(i16::MAX); /*@add_assign_i16*/ x += bb(1); x }, i16::MAX.wrapping_add(1), Op::Add);
    t.one("sub_assign_i16", { let mut x = bb(i16::MIN); /*@sub_assign_i16*/ x -= bb(1); x }, i16::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_assign_i16", { let mut x = bb(i16::MAX); /*@mul_assign_i16*/ x *= bb(3); x }, i16::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_assign_i16", { let mut x = bb::<i16>(1); /*@shl_assign_i16*/ x <<= bb(i16::BITS); x }, 1i16.wrapping_shl(i16::BITS), Op::Shl);
    t.one("shr_assign_i16", { let mut x = bb(i16::MAX); /*@shr_assign_i16*/ x >>= bb(i16::BITS + 1); x }, i16::MAX.wrapping_shr(i16::BITS + 1), Op::Shr);
    // i32
    t.one("add_assign_i32", { let mut x = bb(i32::MAX); /*@add_assign_i32*/ x += bb(1); x }, i32::MAX.wrapping_add(1), Op::Add);
    t.one("sub_assign_i32", { let mut x = bb(i32::MIN); /*@sub_assign_i32*/ x -= bb(1); x }, i32::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_assign_i32", { let mut x = bb(i32::MAX); /*@mul_assign_i32*/ x *= bb(3); x }, i32::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_assign_i32", { let mut x = bb::<i32>(1); /*@shl_assign_i32*/ x <<= bb(i32::BITS); x }, 1i32.wrapping_shl(i32::BITS), Op::Shl);
    t.one("shr_assign_i32", { let mut x = bb(i32::MAX); /*@shr_assign_i32*/ x >>= bb(i32::BITS + 1); x }, i32::MAX.wrapping_shr(i32::BITS + 1), Op::Shr);
    // i64
    t.one("add_assign_i64", { let mut x = bb(i64::MAX); /*@add_assign_i64*/ x += bb(1); x }, i64::MAX.wrapping_add(1), Op::Add);
    t.one("sub_assign_i64", { let mut x = bb(i64::MIN); /*@sub_assign_i64*/ x -= bb(1); x }, i64::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_assign_i64", { let mut x = bb(i64::MAX); /*@mul_assign_i64*/ x *= bb(3); x }, i64::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_assign_i64", { let mut x = bb::<i64>(1); /*@shl_assign_i64*/ x <<= bb(i64::BITS); x }, 1i64.wrapping_shl(i64::BITS), Op::Shl);
    t.one("shr_assign_i64", { let mut x = bb(i64::MAX); /*@shr_assign_i64*/ x >>= bb(i64::BITS + 1); x }, i64::MAX.wrapping_shr(i64::BITS + 1), Op::Shr);
    // i128
    t.one("add_assign_i128", { let mut x = bb(i128::MAX); /*@add_assign_i128*/ x += bb(1); x }, i128::MAX.wrapping_add(1), Op::Add);
    t.one("sub_assign_i128", { let mut x = bb(i128::MIN); /*@sub_assign_i128*/ x -= bb(1); x }, i128::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_assign_i128", { let mut x = bb(i128::MAX); /*@mul_assign_i128*/ x *= bb(3); x }, i128::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_assign_i128", { let mut x = bb::<i128>(1); /*@shl_assign_i128*/ x <<= bb(i128::BITS); x }, 1i128.wrapping_shl(i128::BITS), Op::Shl);
    t.one("shr_assign_i128", { let mut x = bb(i128::MAX); /*@shr_assign_i128*/ x >>= bb(i128::BITS + 1); x }, i128::MAX.wrapping_shr(i128::BITS + 1), Op::Shr);
    // isize
    t.one("add_assign_isize", { let mut x = bb(isize::MAX); /*@add_assign_isize*/ x += bb(1); x }, isize::MAX.wrapping_add(1), Op::Add);
    t.one("sub_assign_isize", { let mut x = bb(isize::MIN); /*@sub_assign_isize*/ x -= bb(1); x }, isize::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_assign_isize", { let mut x = bb(isize::MAX); /*@mul_assign_isize*/ x *= bb(3); x }, isize::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_assign_isize", { let mut x = bb::<isize>(1); /*@shl_assign_isize*/ x <<= bb(isize::BITS); x }, 1isize.wrapping_shl(isize::BITS), Op::Shl);
    t.one("shr_assign_isize", { let mut x = bb(isize::MAX); /*@shr_assign_isize*/ x >>= bb(isize::BITS + 1); x }, isize::MAX.wrapping_shr(isize::BITS + 1), Op::Shr);
    // u8
    t.one("add_assign_u8", { let mut x = bb(u8::MAX); /*@add_assign_u8*/ x += bb(1); x }, u8::MAX.wrapping_add(1), Op::Add);
    t.one("sub_assign_u8", { let mut x = bb(u8::MIN); /*@sub_assign_u8*/ x -= bb(1); x }, u8::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_assign_u8", { let mut x = bb(u8::MAX); /*@mul_assign_u8*/ x *= bb(3); x }, u8::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_assign_u8", { let mut x = bb::<u8>(1); /*@shl_assign_u8*/ x <<= bb(u8::BITS); x }, 1u8.wrapping_shl(u8::BITS), Op::Shl);
    t.one("shr_assign_u8", { let mut x = bb(u8::MAX); /*@shr_assign_u8*/ x >>= bb(u8::BITS + 1); x }, u8::MAX.wrapping_shr(u8::BITS + 1), Op::Shr);
    // u16
    t.one("add_assign_u16", { let mut x = bb(u16::MAX); /*@add_assign_u16*/ x += bb(1); x }, u16::MAX.wrapping_add(1), Op::Add);
    t.one("sub_assign_u16", { let mut x = bb(u16::MIN); /*@sub_assign_u16*/ x -= bb(1); x }, u16::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_assign_u16", { let mut x = bb(u16::MAX); /*@mul_assign_u16*/ x *= bb(3); x }, u16::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_assign_u16", { let mut x = bb::<u16>(1); /*@shl_assign_u16*/ x <<= bb(u16::BITS); x }, 1u16.wrapping_shl(u16::BITS), Op::Shl);
    t.one("shr_assign_u16", { let mut x = bb(u16::MAX); /*@shr_assign_u16*/ x >>= bb(u16::BITS + 1); x }, u16::MAX.wrapping_shr(u16::BITS + 1), Op::Shr);
    // u32
    t.one("add_assign_u32", { let mut x = bb(u32::MAX); /*@add_assign_u32*/ x += bb(1); x }, u32::MAX.wrapping_add(1), Op::Add);
    t.one("sub_assign_u32", { let mut x = bb(u32::MIN); /*@sub_assign_u32*/ x -= bb(1); x }, u32::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_assign_u32", { let mut x = bb(u32::MAX); /*@mul_assign_u32*/ x *= bb(3); x }, u32::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_assign_u32", { let mut x = bb::<u32>(1); /*@shl_assign_u32*/ x <<= bb(u32::BITS); x }, 1u32.wrapping_shl(u32::BITS), Op::Shl);
    t.one("shr_assign_u32", { let mut x = bb(u32::MAX); /*@shr_assign_u32*/ x >>= bb(u32::BITS + 1); x }, u32::MAX.wrapping_shr(u32::BITS + 1), Op::Shr);
    // u64
    t.one("add_assign_u64", { let mut x = bb(u64::MAX); /*@add_assign_u64*/ x += bb(1); x }, u64::MAX.wrapping_add(1), Op::Add);
    t.one("sub_assign_u64", { let mut x = bb(u64::MIN); /*@sub_assign_u64*/ x -= bb(1); x }, u64::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_assign_u64", { let mut x = bb(u64::MAX); /*@mul_assign_u64*/ x *= bb(3); x }, u64::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_assign_u64", { let mut x = bb::<u64>(1); /*@shl_assign_u64*/ x <<= bb(u64::BITS); x }, 1u64.wrapping_shl(u64::BITS), Op::Shl);
    t.one("shr_assign_u64", { let mut x = bb(u64::MAX); /*@shr_assign_u64*/ x >>= bb(u64::BITS + 1); x }, u64::MAX.wrapping_shr(u64::BITS + 1), Op::Shr);
    // u128
    t.one("add_assign_u128", { let mut x = bb(u128::MAX); /*@add_assign_u128*/ x += bb(1); x }, u128::MAX.wrapping_add(1), Op::Add);
    t.one("sub_assign_u128", { let mut x = bb(u128::MIN); /*@sub_assign_u128*/ x -= bb(1); x }, u128::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_assign_u128", { let mut x = bb(u128::MAX); /*@mul_assign_u128*/ x *= bb(3); x }, u128::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_assign_u128", { let mut x = bb::<u128>(1); /*@shl_assign_u128*/ x <<= bb(u128::BITS); x }, 1u128.wrapping_shl(u128::BITS), Op::Shl);
    t.one("shr_assign_u128", { let mut x = bb(u128::MAX); /*@shr_assign_u128*/ x >>= bb(u128::BITS + 1); x }, u128::MAX.wrapping_shr(u128::BITS + 1), Op::Shr);
    // usize
    t.one("add_assign_usize", { let mut x = bb(usize::MAX); /*@add_assign_usize*/ x += bb(1); x }, usize::MAX.wrapping_add(1), Op::Add);
    t.one("sub_assign_usize", { let mut x = bb(usize::MIN); /*@sub_assign_usize*/ x -= bb(1); x }, usize::MIN.wrapping_sub(1), Op::Sub);
    t.one("mul_assign_usize", { let mut x = bb(usize::MAX); /*@mul_assign_usize*/ x *= bb(3); x }, usize::MAX.wrapping_mul(3), Op::Mul);
    t.one("shl_assign_usize", { let mut x = bb::<usize>(1); /*@shl_assign_usize*/ x <<= bb(usize::BITS); x }, 1usize.wrapping_shl(usize::BITS), Op::Shl);
    t.one("shr_assign_usize", { let mut x = bb(usize::MAX); /*@shr_assign_usize*/ x >>= bb(usize::BITS + 1); x }, usize::MAX.wrapping_shr(usize::BITS + 1), Op::Shr);
}

/// The same operations near the limits, without overflow: nothing is reported.
#[rustfmt::skip]
fn no_overflow(t: &mut Tester) {
    // i8
    t.none("add_ok_i8", bb(i8::MAX - 1) + bb(1), i8::MAX);
    t.none("sub_ok_i8", bb(i8::MIN + 1) - bb(1), i8::MIN);
    t.none("mul_ok_i8", bb(i8::MAX / 2) * bb(2), i8::MAX - 1);
    t.none("mul_min_ok_i8", bb(i8::MIN / 2) * bb(2), i8::MIN);
    t.none("neg_ok_i8", -bb(i8::MIN + 1), i8::MAX);
    t.none("shl_ok_i8", bb::<i8>(1) << bb(i8::BITS - 1), 1i8.rotate_right(1));
    t.none("shr_ok_i8", bb(i8::MAX) >> bb(i8::BITS - 1), 0);
    t.none("add_assign_ok_i8", { let mut x = bb(i8::MAX - 1); x += bb(1); x }, i8::MAX);
    // i16
    t.none("add_ok_i16", bb(i16::MAX - 1) + bb(1), i16::MAX);
    t.none("sub_ok_i16", bb(i16::MIN + 1) - bb(1), i16::MIN);
    t.none("mul_ok_i16", bb(i16::MAX / 2) * bb(2), i16::MAX - 1);
    t.none("mul_min_ok_i16", bb(i16::MIN / 2) * bb(2), i16::MIN);
    t.none("neg_ok_i16", -bb(i16::MIN + 1), i16::MAX);
    t.none("shl_ok_i16", bb::<i16>(1) << bb(i16::BITS - 1), 1i16.rotate_right(1));
    t.none("shr_ok_i16", bb(i16::MAX) >> bb(i16::BITS - 1), 0);
    t.none("add_assign_ok_i16", { let mut x = bb(i16::MAX - 1); x += bb(1); x }, i16::MAX);
    // i32
    t.none("add_ok_i32", bb(i32::MAX - 1) + bb(1), i32::MAX);
    t.none("sub_ok_i32", bb(i32::MIN + 1) - bb(1), i32::MIN);
    t.none("mul_ok_i32", bb(i32::MAX / 2) * bb(2), i32::MAX - 1);
    t.none("mul_min_ok_i32", bb(i32::MIN / 2) * bb(2), i32::MIN);
    t.none("neg_ok_i32", -bb(i32::MIN + 1), i32::MAX);
    t.none("shl_ok_i32", bb::<i32>(1) << bb(i32::BITS - 1), 1i32.rotate_right(1));
    t.none("shr_ok_i32", bb(i32::MAX) >> bb(i32::BITS - 1), 0);
    t.none("add_assign_ok_i32", { let mut x = bb(i32::MAX - 1); x += bb(1); x }, i32::MAX);
    // i64
    t.none("add_ok_i64", bb(i64::MAX - 1) + bb(1), i64::MAX);
    t.none("sub_ok_i64", bb(i64::MIN + 1) - bb(1), i64::MIN);
    t.none("mul_ok_i64", bb(i64::MAX / 2) * bb(2), i64::MAX - 1);
    t.none("mul_min_ok_i64", bb(i64::MIN / 2) * bb(2), i64::MIN);
    t.none("neg_ok_i64", -bb(i64::MIN + 1), i64::MAX);
    t.none("shl_ok_i64", bb::<i64>(1) << bb(i64::BITS - 1), 1i64.rotate_right(1));
    t.none("shr_ok_i64", bb(i64::MAX) >> bb(i64::BITS - 1), 0);
    t.none("add_assign_ok_i64", { let mut x = bb(i64::MAX - 1); x += bb(1); x }, i64::MAX);
    // i128
    t.none("add_ok_i128", bb(i128::MAX - 1) + bb(1), i128::MAX);
    t.none("sub_ok_i128", bb(i128::MIN + 1) - bb(1), i128::MIN);
    t.none("mul_ok_i128", bb(i128::MAX / 2) * bb(2), i128::MAX - 1);
    t.none("mul_min_ok_i128", bb(i128::MIN / 2) * bb(2), i128::MIN);
    t.none("neg_ok_i128", -bb(i128::MIN + 1), i128::MAX);
    t.none("shl_ok_i128", bb::<i128>(1) << bb(i128::BITS - 1), 1i128.rotate_right(1));
    t.none("shr_ok_i128", bb(i128::MAX) >> bb(i128::BITS - 1), 0);
    t.none("add_assign_ok_i128", { let mut x = bb(i128::MAX - 1); x += bb(1); x }, i128::MAX);
    // isize
    t.none("add_ok_isize", bb(isize::MAX - 1) + bb(1), isize::MAX);
    t.none("sub_ok_isize", bb(isize::MIN + 1) - bb(1), isize::MIN);
    t.none("mul_ok_isize", bb(isize::MAX / 2) * bb(2), isize::MAX - 1);
    t.none("mul_min_ok_isize", bb(isize::MIN / 2) * bb(2), isize::MIN);
    t.none("neg_ok_isize", -bb(isize::MIN + 1), isize::MAX);
    t.none("shl_ok_isize", bb::<isize>(1) << bb(isize::BITS - 1), 1isize.rotate_right(1));
    t.none("shr_ok_isize", bb(isize::MAX) >> bb(isize::BITS - 1), 0);
    t.none("add_assign_ok_isize", { let mut x = bb(isize::MAX - 1); x += bb(1); x }, isize::MAX);
    // u8
    t.none("add_ok_u8", bb(u8::MAX - 1) + bb(1), u8::MAX);
    t.none("sub_ok_u8", bb(u8::MIN + 1) - bb(1), u8::MIN);
    t.none("mul_ok_u8", bb(u8::MAX / 2) * bb(2), u8::MAX - 1);
    t.none("shl_ok_u8", bb::<u8>(1) << bb(u8::BITS - 1), 1u8.rotate_right(1));
    t.none("shr_ok_u8", bb(u8::MAX) >> bb(u8::BITS - 1), 1);
    t.none("add_assign_ok_u8", { let mut x = bb(u8::MAX - 1); x += bb(1); x }, u8::MAX);
    // u16
    t.none("add_ok_u16", bb(u16::MAX - 1) + bb(1), u16::MAX);
    t.none("sub_ok_u16", bb(u16::MIN + 1) - bb(1), u16::MIN);
    t.none("mul_ok_u16", bb(u16::MAX / 2) * bb(2), u16::MAX - 1);
    t.none("shl_ok_u16", bb::<u16>(1) << bb(u16::BITS - 1), 1u16.rotate_right(1));
    t.none("shr_ok_u16", bb(u16::MAX) >> bb(u16::BITS - 1), 1);
    t.none("add_assign_ok_u16", { let mut x = bb(u16::MAX - 1); x += bb(1); x }, u16::MAX);
    // u32
    t.none("add_ok_u32", bb(u32::MAX - 1) + bb(1), u32::MAX);
    t.none("sub_ok_u32", bb(u32::MIN + 1) - bb(1), u32::MIN);
    t.none("mul_ok_u32", bb(u32::MAX / 2) * bb(2), u32::MAX - 1);
    t.none("shl_ok_u32", bb::<u32>(1) << bb(u32::BITS - 1), 1u32.rotate_right(1));
    t.none("shr_ok_u32", bb(u32::MAX) >> bb(u32::BITS - 1), 1);
    t.none("add_assign_ok_u32", { let mut x = bb(u32::MAX - 1); x += bb(1); x }, u32::MAX);
    // u64
    t.none("add_ok_u64", bb(u64::MAX - 1) + bb(1), u64::MAX);
    t.none("sub_ok_u64", bb(u64::MIN + 1) - bb(1), u64::MIN);
    t.none("mul_ok_u64", bb(u64::MAX / 2) * bb(2), u64::MAX - 1);
    t.none("shl_ok_u64", bb::<u64>(1) << bb(u64::BITS - 1), 1u64.rotate_right(1));
    t.none("shr_ok_u64", bb(u64::MAX) >> bb(u64::BITS - 1), 1);
    t.none("add_assign_ok_u64", { let mut x = bb(u64::MAX - 1); x += bb(1); x }, u64::MAX);
    // u128
    t.none("add_ok_u128", bb(u128::MAX - 1) + bb(1), u128::MAX);
    t.none("sub_ok_u128", bb(u128::MIN + 1) - bb(1), u128::MIN);
    t.none("mul_ok_u128", bb(u128::MAX / 2) * bb(2), u128::MAX - 1);
    t.none("shl_ok_u128", bb::<u128>(1) << bb(u128::BITS - 1), 1u128.rotate_right(1));
    t.none("shr_ok_u128", bb(u128::MAX) >> bb(u128::BITS - 1), 1);
    t.none("add_assign_ok_u128", { let mut x = bb(u128::MAX - 1); x += bb(1); x }, u128::MAX);
    // usize
    t.none("add_ok_usize", bb(usize::MAX - 1) + bb(1), usize::MAX);
    t.none("sub_ok_usize", bb(usize::MIN + 1) - bb(1), usize::MIN);
    t.none("mul_ok_usize", bb(usize::MAX / 2) * bb(2), usize::MAX - 1);
    t.none("shl_ok_usize", bb::<usize>(1) << bb(usize::BITS - 1), 1usize.rotate_right(1));
    t.none("shr_ok_usize", bb(usize::MAX) >> bb(usize::BITS - 1), 1);
    t.none("add_assign_ok_usize", { let mut x = bb(usize::MAX - 1); x += bb(1); x }, usize::MAX);
}

/// Two overflows in one expression are reported in evaluation order.
fn several_in_one_expression(t: &mut Tester) {
    // `a + b - c` is `(a + b) - c`: both spans start at `a`.
    let s = site("add_sub");
    let got = /*@add_sub*/ bb(i8::MAX) + bb(1) - bb(i8::MAX);
    let want = i8::MAX.wrapping_add(1).wrapping_sub(i8::MAX);
    t.at("add_sub", got, want, &[(Op::Add, s), (Op::Sub, s)]);

    // The product is reported first, then the negation at its `-`. The span of an expression
    // in parentheses includes them.
    let got = /*@neg_of_mul*/ -/*@mul_in_neg*/(bb(i32::MIN) * bb(3));
    let want = i32::MIN.wrapping_mul(3).wrapping_neg();
    let expected = [(Op::Mul, site("mul_in_neg")), (Op::Neg, site("neg_of_mul"))];
    t.at("mul_then_neg", got, want, &expected);

    // The right-hand side of a compound assignment is evaluated first.
    let mut x = bb(-1i8);
    /*@add_assign_outer*/
    x += /*@add_assign_rhs*/ bb(i8::MAX) + bb(1);
    let want = (-1i8).wrapping_add(i8::MAX.wrapping_add(1));
    let expected = [
        (Op::Add, site("add_assign_rhs")),
        (Op::Add, site("add_assign_outer")),
    ];
    t.at("add_assign_rhs_then_outer", x, want, &expected);
}

/// `u8` and `i8` addition, subtraction and multiplication of all 65536 pairs: the result is
/// the wrapping one, and there is one report for each pair that `checked_*` rejects.
fn exhaustive_8_bit(t: &mut Tester) {
    let (mut wrong, mut overflows) = (0, 0);
    for a in 0..=u8::MAX {
        for b in 0..=u8::MAX {
            let got = /*@exhaustive_add_u8*/ bb(a) + bb(b);
            wrong += usize::from(got != a.wrapping_add(b));
            overflows += usize::from(a.checked_add(b).is_none());
        }
    }
    let s = site("exhaustive_add_u8");
    t.many("exhaustive_add_u8", wrong, overflows, Op::Add, s);

    let (mut wrong, mut overflows) = (0, 0);
    for a in 0..=u8::MAX {
        for b in 0..=u8::MAX {
            let got = /*@exhaustive_sub_u8*/ bb(a) - bb(b);
            wrong += usize::from(got != a.wrapping_sub(b));
            overflows += usize::from(a.checked_sub(b).is_none());
        }
    }
    let s = site("exhaustive_sub_u8");
    t.many("exhaustive_sub_u8", wrong, overflows, Op::Sub, s);

    let (mut wrong, mut overflows) = (0, 0);
    for a in 0..=u8::MAX {
        for b in 0..=u8::MAX {
            let got = /*@exhaustive_mul_u8*/ bb(a) * bb(b);
            wrong += usize::from(got != a.wrapping_mul(b));
            overflows += usize::from(a.checked_mul(b).is_none());
        }
    }
    let s = site("exhaustive_mul_u8");
    t.many("exhaustive_mul_u8", wrong, overflows, Op::Mul, s);

    let (mut wrong, mut overflows) = (0, 0);
    for a in i8::MIN..=i8::MAX {
        for b in i8::MIN..=i8::MAX {
            let got = /*@exhaustive_add_i8*/ bb(a) + bb(b);
            wrong += usize::from(got != a.wrapping_add(b));
            overflows += usize::from(a.checked_add(b).is_none());
        }
    }
    let s = site("exhaustive_add_i8");
    t.many("exhaustive_add_i8", wrong, overflows, Op::Add, s);

    let (mut wrong, mut overflows) = (0, 0);
    for a in i8::MIN..=i8::MAX {
        for b in i8::MIN..=i8::MAX {
            let got = /*@exhaustive_sub_i8*/ bb(a) - bb(b);
            wrong += usize::from(got != a.wrapping_sub(b));
            overflows += usize::from(a.checked_sub(b).is_none());
        }
    }
    let s = site("exhaustive_sub_i8");
    t.many("exhaustive_sub_i8", wrong, overflows, Op::Sub, s);

    let (mut wrong, mut overflows) = (0, 0);
    for a in i8::MIN..=i8::MAX {
        for b in i8::MIN..=i8::MAX {
            let got = /*@exhaustive_mul_i8*/ bb(a) * bb(b);
            wrong += usize::from(got != a.wrapping_mul(b));
            overflows += usize::from(a.checked_mul(b).is_none());
        }
    }
    let s = site("exhaustive_mul_i8");
    t.many("exhaustive_mul_i8", wrong, overflows, Op::Mul, s);
}

/// Shifts by amounts of at least the bit width, also of other types and negative ones (which
/// count as unsigned): one report each, and the amount is masked as `wrapping_shl` does.
fn shifts(t: &mut Tester) {
    let (mut wrong, mut overflows) = (0, 0);
    for amount in 0..=u8::MAX {
        let got = /*@shl_u8_by_every_u8*/ bb(0b1000_0001u8) << bb(amount);
        wrong += usize::from(got != 0b1000_0001u8.wrapping_shl(u32::from(amount)));
        overflows += usize::from(amount >= 8);
    }
    let s = site("shl_u8_by_every_u8");
    t.many("shl_u8_by_every_u8", wrong, overflows, Op::Shl, s);

    let (mut wrong, mut overflows) = (0, 0);
    for amount in 0..=u8::MAX {
        let got = /*@shr_u8_by_every_u8*/ bb(0b1000_0001u8) >> bb(amount);
        wrong += usize::from(got != 0b1000_0001u8.wrapping_shr(u32::from(amount)));
        overflows += usize::from(amount >= 8);
    }
    let s = site("shr_u8_by_every_u8");
    t.many("shr_u8_by_every_u8", wrong, overflows, Op::Shr, s);

    let (mut wrong, mut overflows) = (0, 0);
    for amount in -70..=70i32 {
        let got = /*@shl_i32_by_i32*/ bb(3i32) << bb(amount);
        wrong += usize::from(got != 3i32.wrapping_shl(amount as u32));
        overflows += usize::from(!(0..32).contains(&amount));
    }
    let s = site("shl_i32_by_i32");
    t.many(
        "shl_i32_by_negative_and_large_i32",
        wrong,
        overflows,
        Op::Shl,
        s,
    );

    let (mut wrong, mut overflows) = (0, 0);
    for amount in i8::MIN..=i8::MAX {
        let got = /*@shr_i64_by_i8*/ bb(i64::MIN + 5) >> bb(amount);
        wrong += usize::from(got != (i64::MIN + 5).wrapping_shr(amount as u32));
        overflows += usize::from(!(0..64).contains(&amount));
    }
    let s = site("shr_i64_by_i8");
    t.many("shr_i64_by_every_i8", wrong, overflows, Op::Shr, s);

    // -1 as `u8` is 255, masked to 63.
    t.one(
        "shl_i64_by_minus_1_i8",
        /*@shl_i64_by_minus_1_i8*/ bb(1i64) << bb(-1i8),
        i64::MIN,
        Op::Shl,
    );
    // -31 as `u32` is 2^32 - 31, masked to 1.
    t.one(
        "shr_i32_by_minus_31",
        /*@shr_i32_by_minus_31*/ bb(i32::MIN) >> bb(-31),
        i32::MIN >> 1,
        Op::Shr,
    );
    // 2^64 + 3 is masked to 3.
    t.one(
        "shl_u128_by_huge_u128",
        /*@shl_u128_by_huge_u128*/ bb(1u128) << bb((1u128 << 64) + 3),
        8,
        Op::Shl,
    );
    // `usize::MAX` is masked to 15.
    t.one(
        "shr_i16_by_usize_max",
        /*@shr_i16_by_usize_max*/ bb(i16::MIN) >> bb(usize::MAX),
        -1,
        Op::Shr,
    );
    // `i128::MIN` is 2^127 as unsigned, masked to 0.
    t.one(
        "shl_u8_by_i128_min",
        /*@shl_u8_by_i128_min*/ bb(1u8) << bb(i128::MIN),
        1,
        Op::Shl,
    );
    // `isize::MIN` is masked to 0.
    t.one(
        "shr_u64_by_isize_min",
        /*@shr_u64_by_isize_min*/ bb(u64::MAX) >> bb(isize::MIN),
        u64::MAX,
        Op::Shr,
    );

    t.none("shl_u64_by_0", bb(u64::MAX) << bb(0), u64::MAX);
    t.none("shr_i128_by_127_u8", bb(i128::MIN) >> bb(127u8), -1);
    t.none("shl_u16_by_15_i64", bb(1u16) << bb(15i64), 0x8000);
}

fn add<T: Add<Output = T>>(a: T, b: T) -> T {
    /*@generic_add*/
    a + b
}

fn sub<T: Sub<Output = T>>(a: T, b: T) -> T {
    /*@generic_sub*/
    a - b
}

fn mul<T: Mul<Output = T>>(a: T, b: T) -> T {
    /*@generic_mul*/
    a * b
}

fn add_assign<T: AddAssign>(a: &mut T, b: T) {
    /*@generic_add_assign*/
    *a += b;
}

fn neg<T: Neg<Output = T>>(a: T) -> T {
    /*@generic_neg*/
    -a
}

fn shl<T: Shl<u32, Output = T>>(a: T, b: u32) -> T {
    /*@generic_shl*/
    a << b
}

fn shr<T: Shr<i8, Output = T>>(a: T, b: i8) -> T {
    /*@generic_shr*/
    a >> b
}

fn shl_assign<T: ShlAssign<u8>>(a: &mut T, b: u8) {
    /*@generic_shl_assign*/
    *a <<= b;
}

/// Operators in generic code go through the `core::ops` impls, which inherit the overflow
/// checks and are `#[track_caller]`: they report at the operator in the generic function,
/// where `-Coverflow-checks=on` panics.
fn generic(t: &mut Tester) {
    let s = site("generic_add");
    t.at(
        "generic_add_i8",
        add(bb(i8::MAX), bb(1)),
        i8::MIN,
        &[(Op::Add, s)],
    );
    t.at(
        "generic_add_u32",
        add(bb(u32::MAX), bb(2)),
        1,
        &[(Op::Add, s)],
    );
    t.at(
        "generic_add_i128",
        add(bb(i128::MAX), bb(1)),
        i128::MIN,
        &[(Op::Add, s)],
    );
    t.at(
        "generic_add_usize",
        add(bb(usize::MAX), bb(1)),
        0,
        &[(Op::Add, s)],
    );
    t.none("generic_add_ok", add(bb(40u16), bb(2)), 42);
    let s = site("generic_sub");
    t.at(
        "generic_sub_u16",
        sub(bb(0u16), bb(1)),
        u16::MAX,
        &[(Op::Sub, s)],
    );
    t.at(
        "generic_sub_isize",
        sub(bb(isize::MIN), bb(1)),
        isize::MAX,
        &[(Op::Sub, s)],
    );
    let s = site("generic_mul");
    t.at(
        "generic_mul_i64",
        mul(bb(i64::MAX), bb(2)),
        -2,
        &[(Op::Mul, s)],
    );
    t.at(
        "generic_mul_u128",
        mul(bb(u128::MAX), bb(u128::MAX)),
        1,
        &[(Op::Mul, s)],
    );
    let s = site("generic_add_assign");
    let mut x = bb(u8::MAX);
    add_assign(&mut x, bb(2));
    t.at("generic_add_assign_u8", x, 1, &[(Op::Add, s)]);
    let s = site("generic_neg");
    t.at(
        "generic_neg_i16",
        neg(bb(i16::MIN)),
        i16::MIN,
        &[(Op::Neg, s)],
    );
    t.at(
        "generic_neg_i128",
        neg(bb(i128::MIN)),
        i128::MIN,
        &[(Op::Neg, s)],
    );
    t.none("generic_neg_ok", neg(bb(5i32)), -5);
    let s = site("generic_shl");
    t.at("generic_shl_u64", shl(bb(3u64), bb(65)), 6, &[(Op::Shl, s)]);
    t.at("generic_shl_i8", shl(bb(1i8), bb(8)), 1, &[(Op::Shl, s)]);
    let s = site("generic_shr");
    t.at(
        "generic_shr_usize",
        shr(bb(usize::MAX), bb(-1)),
        1,
        &[(Op::Shr, s)],
    );
    t.at(
        "generic_shr_i32",
        shr(bb(-64i32), bb(33)),
        -32,
        &[(Op::Shr, s)],
    );
    let s = site("generic_shl_assign");
    let mut x = bb(1i32);
    shl_assign(&mut x, bb(32));
    t.at("generic_shl_assign_i32", x, 1, &[(Op::Shl, s)]);
}

/// Checks that `core` inherits with `#[rustc_inherit_overflow_checks]`.
fn inherited(t: &mut Tester) {
    use common::*;
    t.at(
        "abs_i8",
        bb(i8::MIN).abs(),
        i8::MIN,
        &[(Op::Neg, CORE_NUM_I8)],
    );
    t.at(
        "abs_i16",
        bb(i16::MIN).abs(),
        i16::MIN,
        &[(Op::Neg, CORE_NUM_I16)],
    );
    t.at(
        "abs_i32",
        bb(i32::MIN).abs(),
        i32::MIN,
        &[(Op::Neg, CORE_NUM_I32)],
    );
    t.at(
        "abs_i64",
        bb(i64::MIN).abs(),
        i64::MIN,
        &[(Op::Neg, CORE_NUM_I64)],
    );
    t.at(
        "abs_i128",
        bb(i128::MIN).abs(),
        i128::MIN,
        &[(Op::Neg, CORE_NUM_I128)],
    );
    t.at(
        "abs_isize",
        bb(isize::MIN).abs(),
        isize::MIN,
        &[(Op::Neg, CORE_NUM_ISIZE)],
    );
    t.none("abs_ok", bb(-5i32).abs(), 5);

    // With an exponent not known at compile time, `pow` squares the base only while more bits
    // of the exponent remain: these overflow in exactly one multiplication.
    let want = 2i32.wrapping_pow(40);
    t.at(
        "pow_i32",
        bb(2i32).pow(bb(40)),
        want,
        &[(Op::Mul, CORE_NUM_I32)],
    );
    let want = 3u8.wrapping_pow(6);
    t.at(
        "pow_u8",
        bb(3u8).pow(bb(6)),
        want,
        &[(Op::Mul, CORE_NUM_U8)],
    );
    let want = 10u64.wrapping_pow(20);
    t.at(
        "pow_u64",
        bb(10u64).pow(bb(20)),
        want,
        &[(Op::Mul, CORE_NUM_U64)],
    );
    t.none("pow_ok", bb(3u8).pow(bb(5)), 243);

    let s = CORE_NUM_U8;
    t.at(
        "next_power_of_two_u8",
        bb(200u8).next_power_of_two(),
        0,
        &[(Op::Add, s)],
    );
    let s = CORE_NUM_U32;
    let got = bb(u32::MAX / 2 + 2).next_power_of_two();
    t.at("next_power_of_two_u32", got, 0, &[(Op::Add, s)]);
    let s = CORE_NUM_U16;
    let got = bb(u16::MAX).next_multiple_of(bb(2));
    t.at("next_multiple_of_u16", got, 0, &[(Op::Add, s)]);

    let s = CORE_SUM_PRODUCT;
    let got = bb([i32::MAX, 1]).iter().sum::<i32>();
    t.at("sum_ref_i32", got, i32::MIN, &[(Op::Add, s)]);
    let got = bb([u64::MAX, 2]).into_iter().sum::<u64>();
    t.at("sum_u64", got, 1, &[(Op::Add, s)]);
    let got = bb([i64::MAX, 2]).iter().product::<i64>();
    t.at("product_ref_i64", got, -2, &[(Op::Mul, s)]);
    let got = bb([u16::MAX, u16::MAX]).into_iter().product::<u16>();
    t.at("product_u16", got, 1, &[(Op::Mul, s)]);
    t.none("sum_ok", bb([1u8, 2, 3]).iter().sum::<u8>(), 6);
    t.none(
        "product_ok",
        bb([-2i8, 4, 8]).into_iter().product::<i8>(),
        -64,
    );

    // Several overflows in one sum or product: one report for each step that overflows.
    let items = bb([i32::MAX; 4]);
    let got = items.iter().sum::<i32>();
    let (want, overflows) = items.iter().fold((0i32, 0), |(sum, n), &x| {
        (
            sum.wrapping_add(x),
            n + usize::from(sum.checked_add(x).is_none()),
        )
    });
    t.many(
        "sum_overflows_twice",
        usize::from(got != want),
        overflows,
        Op::Add,
        s,
    );
    let got = (1..=20u8).product::<u8>();
    let (want, overflows) = (1..=20u8).fold((1u8, 0), |(product, n), x| {
        (
            product.wrapping_mul(x),
            n + usize::from(product.checked_mul(x).is_none()),
        )
    });
    t.many(
        "product_1_to_20_u8",
        usize::from(got != want),
        overflows,
        Op::Mul,
        s,
    );
}

/// Reporting does not stop a loop: each overflowing iteration reports once, at the same site.
fn loops(t: &mut Tester) {
    let mut wrong = 0;
    for i in 1..=1000u16 {
        let got = /*@loop_every_iteration*/ bb(u16::MAX) + bb(i);
        wrong += usize::from(got != i - 1);
    }
    let s = site("loop_every_iteration");
    t.many("loop_every_iteration", wrong, 1000, Op::Add, s);

    let (mut x, mut model, mut overflows) = (bb(1u32), 1u32, 0);
    for _ in 0..100 {
        /*@loop_mul_assign*/
        x *= bb(7);
        overflows += usize::from(model.checked_mul(7).is_none());
        model = model.wrapping_mul(7);
    }
    let s = site("loop_mul_assign");
    t.many(
        "loop_mul_assign",
        usize::from(x != model),
        overflows,
        Op::Mul,
        s,
    );

    let mut n = bb(5u8);
    for _ in 0..10 {
        /*@loop_count_down*/
        n -= 1;
    }
    let s = site("loop_count_down");
    t.many("loop_count_down", usize::from(n != 251), 1, Op::Sub, s);
}

#[inline(never)]
fn add_then_checked_add(a: i32, b: i32) -> (i32, bool) {
    let s = /*@gvn_add*/ a + b;
    (s, a.checked_add(b).is_none())
}

#[inline(never)]
fn add_black_boxes_then_checked_add(a: i32, b: i32) -> (i32, bool) {
    let s = /*@gvn_add_black_box*/ bb(a) + bb(b);
    let none = a.checked_add(b).is_none();
    (s, none)
}

#[inline(never)]
fn sub_then_overflowing_sub(a: u64, b: u64) -> (u64, bool) {
    let s = /*@gvn_sub*/ a - b;
    (s, a.overflowing_sub(b).1)
}

#[inline(never)]
fn mul_then_checked_mul(a: i16, b: i16) -> (i16, bool) {
    let p = /*@gvn_mul*/ a * b;
    (p, a.checked_mul(b).is_none())
}

#[inline(never)]
fn neg_then_checked_neg(a: i8) -> (i8, bool) {
    let n = /*@gvn_neg*/ -a;
    (n, a.checked_neg().is_none())
}

#[inline(never)]
fn shl_then_checked_shl(a: u32, b: u32) -> (u32, bool) {
    let s = /*@gvn_shl*/ a << b;
    (s, a.checked_shl(b).is_none())
}

#[inline(never)]
fn add_then_compare(a: u32, b: u32) -> bool {
    let s = /*@gvn_compare*/ a + b;
    s < a
}

/// After a reported overflow, later code must not assume that the check passed: with
/// optimizations, GVN and SSA range propagation used to fold the second overflow test to
/// "no overflow".
fn gvn_and_range_propagation(t: &mut Tester) {
    let got = add_then_checked_add(bb(i32::MAX), bb(1));
    t.at(
        "gvn_add",
        got,
        (i32::MIN, true),
        &[(Op::Add, site("gvn_add"))],
    );
    t.none("gvn_add_ok", add_then_checked_add(bb(1), bb(2)), (3, false));
    let got = add_black_boxes_then_checked_add(bb(i32::MIN), bb(-1));
    let s = site("gvn_add_black_box");
    t.at("gvn_add_black_box", got, (i32::MAX, true), &[(Op::Add, s)]);
    let got = sub_then_overflowing_sub(bb(1), bb(2));
    t.at(
        "gvn_sub",
        got,
        (u64::MAX, true),
        &[(Op::Sub, site("gvn_sub"))],
    );
    let got = mul_then_checked_mul(bb(i16::MIN), bb(-1));
    t.at(
        "gvn_mul",
        got,
        (i16::MIN, true),
        &[(Op::Mul, site("gvn_mul"))],
    );
    let got = neg_then_checked_neg(bb(i8::MIN));
    t.at(
        "gvn_neg",
        got,
        (i8::MIN, true),
        &[(Op::Neg, site("gvn_neg"))],
    );
    let got = shl_then_checked_shl(bb(1), bb(33));
    t.at("gvn_shl", got, (2, true), &[(Op::Shl, site("gvn_shl"))]);
    let got = add_then_compare(bb(u32::MAX), bb(2));
    t.at("gvn_compare", got, true, &[(Op::Add, site("gvn_compare"))]);

    let (a, b) = (bb(i32::MAX), bb(2));
    let s = /*@gvn_inline*/ a + b;
    let none = a.checked_add(b).is_none();
    t.at(
        "gvn_inline",
        (s, none),
        (i32::MIN + 1, true),
        &[(Op::Add, site("gvn_inline"))],
    );
}

/// Division and remainder by zero, `MIN / -1`, `MIN % -1` and bounds checks are not optional
/// overflow checks: they still panic with today's messages, with the handler installed.
fn still_panics(t: &mut Tester) {
    let got = catch(|| /*@div_by_zero*/ bb(1i32) / bb(0));
    t.panics("div_by_zero", got, "attempt to divide by zero");
    let got = catch(|| /*@div_min_by_minus_1*/ bb(i32::MIN) / bb(-1));
    t.panics("div_min_by_minus_1", got, "attempt to divide with overflow");
    let got = catch(|| /*@rem_min_by_minus_1*/ bb(i64::MIN) % bb(-1));
    t.panics(
        "rem_min_by_minus_1",
        got,
        "attempt to calculate the remainder with overflow",
    );
    let got = catch(|| /*@rem_by_zero*/ bb(7u8) % bb(0));
    let message = "attempt to calculate the remainder with a divisor of zero";
    t.panics("rem_by_zero", got, message);
    let got = catch(|| {
        let mut x = bb(i16::MIN);
        /*@div_assign_min_by_minus_1*/
        x /= bb(-1);
        x
    });
    t.panics(
        "div_assign_min_by_minus_1",
        got,
        "attempt to divide with overflow",
    );
    let got = catch(|| bb(i32::MIN)./*@div_euclid_min_by_minus_1*/div_euclid(bb(-1)));
    t.panics(
        "div_euclid_min_by_minus_1",
        got,
        "attempt to divide with overflow",
    );
    let got = catch(|| /*@index_out_of_bounds*/ bb([1, 2, 3])[bb(5)]);
    let message = "index out of bounds: the len is 3 but the index is 5";
    t.panics("index_out_of_bounds", got, message);
    // The program goes on normally after these panics.
    t.one(
        "add_after_panics",
        /*@add_after_panics*/ bb(u8::MAX) + bb(1),
        0,
        Op::Add,
    );
}
