//! Conformance of `-Coverflow-checks=report` with a handler that records every report.
//!
//! The harness compiles this file with `rustc --edition 2024 -Coverflow-checks=report` at
//! opt-levels 0, 2, 3 and 3 with fat LTO, and runs it. Every overflowing `+`, `-`, `*`, `<<`,
//! `>>`, unary `-` and compound assignment, and every check that `core` inherits through
//! `#[rustc_inherit_overflow_checks]`, must call the handler exactly once and then continue with
//! the wrapped value. Each report is compared with what the program knows about the operation:
//! the operation, the type in the site descriptor, both operands with their values and types
//! (a shift amount keeps its own type), the location that `-Coverflow-checks=on` would panic
//! at, and the site's own location. The site descriptor is checked as well: each check has its
//! own, the same check reached again has the same one, and its flag is the one that the
//! handler left there. Operations that do not overflow must not report; division and bounds
//! checks must still panic.
//!
//! The expected location of an operation in this file is found from a marker comment
//! `/*@tag*/` right before it: the operation's span starts there (at the left operand of a
//! binary operation or compound assignment, at the `-` of a negation, at the callee of a call
//! to a `#[track_caller]` function). Locations in `core` are the constants in `common.rs`.
//! Prints one line per check and `N passed, N failed` last.

#![feature(integer_overflow_report)]

mod common;

use core::panic::{IntegerOverflow, IntegerType as Ty, IntegerValue, Location, OverflowOp as Op};
use std::collections::{HashMap, HashSet};
use std::fmt::{self, Debug, Display};
use std::hint::black_box as bb;
use std::ops::{Add, AddAssign, Mul, Neg, Shl, ShlAssign, Shr, Sub};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, PoisonError};

use common::{Caught, Checks, Site, catch};

/// The text of this file, to find the `/*@tag*/` markers in.
const SOURCE: &str = include_str!("report.rs");

/// The site of the operation after the marker `/*@tag*/` in this file.
fn site(tag: &str) -> Site {
    common::marked(file!(), SOURCE, tag)
}

/// A source location as a [`Location`] gives it: file, line and column.
type Place = (&'static str, u32, u32);

fn place(location: &'static Location<'static>) -> Place {
    (location.file(), location.line(), location.column())
}

fn is_at(site: Site, (file, line, col): Place) -> bool {
    site.matches(file, line, col)
}

fn show((file, line, col): Place) -> String {
    format!("{file}:{line}:{col}")
}

/// One call of the handler, with everything it was given.
#[derive(Clone, Debug)]
struct Report {
    op: Op,
    /// `site().ty()`.
    ty: Ty,
    lhs: Operand,
    rhs: Option<Operand>,
    /// `location()`.
    at: Place,
    /// `site().location()`.
    site_at: Place,
    /// The address of `site()`.
    site: usize,
    /// The site's flag before the handler set it: whether it was reported before.
    reported: bool,
    /// The report's `Display`.
    text: String,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` ({}) at {}, site {:#x} at {}, reported before: {}",
            self.text,
            self.ty,
            show(self.at),
            self.site,
            show(self.site_at),
            self.reported
        )
    }
}

static REPORTS: Mutex<Vec<Report>> = Mutex::new(Vec::new());

/// The handler under test: records the report, sets the site's flag and returns.
#[core::panic::report_integer_overflow]
fn record(overflow: &IntegerOverflow) {
    let site = overflow.site();
    let report = Report {
        op: overflow.op(),
        ty: site.ty(),
        lhs: Operand::reported(overflow.lhs()),
        rhs: overflow.rhs().map(Operand::reported),
        at: place(overflow.location()),
        site_at: place(site.location()),
        site: std::ptr::from_ref(site).addr(),
        reported: site.reported().swap(true, Ordering::Relaxed),
        text: overflow.to_string(),
    };
    REPORTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(report);
}

/// An operand as a report describes it: its type, what each conversion gives, and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Operand {
    ty: Ty,
    i128: Option<i128>,
    u128: Option<u128>,
    i64: Option<i64>,
    u64: Option<u64>,
    negative: bool,
    text: String,
}

impl Operand {
    /// What a report says about one of its operands.
    fn reported(value: IntegerValue) -> Operand {
        Operand {
            ty: value.ty(),
            i128: value.to_i128(),
            u128: value.to_u128(),
            i64: value.to_i64(),
            u64: value.to_u64(),
            negative: value.is_negative(),
            text: value.to_string(),
        }
    }

    /// What a report must say about the operand `x`, by the standard conversions.
    fn of<T: Int>(x: T) -> Operand {
        Operand {
            ty: T::TY,
            i128: TryInto::<i128>::try_into(x).ok(),
            u128: TryInto::<u128>::try_into(x).ok(),
            i64: TryInto::<i64>::try_into(x).ok(),
            u64: TryInto::<u64>::try_into(x).ok(),
            negative: x < T::ZERO,
            text: format!("{x}_{}", T::NAME),
        }
    }
}

/// A primitive integer type: what a report must say about it and its values, and the model of
/// its operations that the results are checked against.
trait Int:
    Copy + Debug + Display + PartialOrd + TryInto<i128> + TryInto<u128> + TryInto<i64> + TryInto<u64>
{
    const TY: Ty;
    const NAME: &'static str;
    const BITS: u32;
    const SIGNED: bool;
    const ZERO: Self;

    /// The value as the unsigned type of the same width, widened: a shift amount is compared
    /// with the width so (a negative amount is a large one).
    fn unsigned(self) -> u128;

    /// `self op rhs` by the standard methods: the wrapped result and whether it overflows.
    /// `rhs` has the type of `self`, except for a shift amount.
    fn model<U: Int>(self, op: Op, rhs: U) -> (Self, bool);
}

macro_rules! int {
    ($($t:ident $unsigned:ident $ty:ident,)*) => {$(
        impl Int for $t {
            const TY: Ty = Ty::$ty;
            const NAME: &'static str = stringify!($t);
            const BITS: u32 = $t::BITS;
            const SIGNED: bool = $t::MIN != 0;
            const ZERO: Self = 0;

            fn unsigned(self) -> u128 {
                self as $unsigned as u128
            }

            fn model<U: Int>(self, op: Op, rhs: U) -> (Self, bool) {
                let amount = rhs.unsigned();
                let shifted = amount >= u128::from(Self::BITS);
                let same = || {
                    assert_eq!(U::TY, Self::TY, "{op:?} of {} and {}", Self::NAME, U::NAME);
                    amount as $unsigned as $t
                };
                match op {
                    Op::Add => self.overflowing_add(same()),
                    Op::Sub => self.overflowing_sub(same()),
                    Op::Mul => self.overflowing_mul(same()),
                    // `wrapping_shl` and `wrapping_shr` mask the amount to the width.
                    Op::Shl => (self.wrapping_shl(amount as u32), shifted),
                    Op::Shr => (self.wrapping_shr(amount as u32), shifted),
                    _ => panic!("no model of {op:?} with two operands"),
                }
            }
        }
    )*};
}

int! {
    i8 u8 I8, i16 u16 I16, i32 u32 I32, i64 u64 I64, i128 u128 I128, isize usize Isize,
    u8 u8 U8, u16 u16 U16, u32 u32 U32, u64 u64 U64, u128 u128 U128, usize usize Usize,
}

/// Where `site().location()` must be.
#[derive(Clone, Copy, Debug)]
enum SiteAt {
    /// At `location()`: any check outside a `#[track_caller]` function.
    Same,
    /// At this operation in a `#[track_caller]` function that is never inlined, while
    /// `location()` is the caller's.
    Exactly(Site),
    /// In a `#[track_caller]` operator impl of `core`: at this operation in it if the impl was
    /// not inlined, which is always the case at opt-level 0 (where the harness's builds have
    /// `debug_assertions`), and at `location()` if it was.
    Tracked(Site),
}

/// A report that a check expects.
#[derive(Clone, Debug)]
struct Expected {
    op: Op,
    lhs: Operand,
    rhs: Option<Operand>,
    /// `location()`.
    at: Site,
    site_at: SiteAt,
}

impl Expected {
    /// `a op b`, reported at `at`.
    fn binary<T: Int, U: Int>(op: Op, a: T, b: U, at: Site) -> Expected {
        Expected {
            op,
            lhs: Operand::of(a),
            rhs: Some(Operand::of(b)),
            at,
            site_at: SiteAt::Same,
        }
    }

    /// `-a`, reported at `at`.
    fn neg<T: Int>(a: T, at: Site) -> Expected {
        Expected {
            op: Op::Neg,
            lhs: Operand::of(a),
            rhs: None,
            at,
            site_at: SiteAt::Same,
        }
    }

    fn site_at(self, site_at: SiteAt) -> Expected {
        Expected { site_at, ..self }
    }

    /// How `r` differs from this expectation, if it does.
    fn mismatch(&self, r: &Report) -> Option<String> {
        let text = |o: &Option<Operand>| o.as_ref().map_or("none".into(), |o| o.text.clone());
        let site_ok = match self.site_at {
            SiteAt::Same => r.site_at == r.at,
            SiteAt::Exactly(s) => is_at(s, r.site_at),
            SiteAt::Tracked(s) if cfg!(debug_assertions) => is_at(s, r.site_at),
            SiteAt::Tracked(s) => is_at(s, r.site_at) || r.site_at == r.at,
        };
        if r.op != self.op {
            Some(format!("the operation is {:?}, want {:?}", r.op, self.op))
        } else if r.ty != self.lhs.ty {
            Some(format!("the site's type is {}, want {}", r.ty, self.lhs.ty))
        } else if r.lhs != self.lhs {
            Some(format!("lhs is {:?}, want {:?}", r.lhs, self.lhs))
        } else if r.rhs != self.rhs {
            let (got, want) = (text(&r.rhs), text(&self.rhs));
            Some(format!(
                "rhs is {got} {:?}, want {want} {:?}",
                r.rhs, self.rhs
            ))
        } else if !is_at(self.at, r.at) {
            Some(format!("it is at {}, want {}", show(r.at), self.at))
        } else if !site_ok {
            let want = match self.site_at {
                SiteAt::Same => "the same".to_string(),
                SiteAt::Exactly(s) => s.to_string(),
                SiteAt::Tracked(s) => format!("{s}, or the same once inlined"),
            };
            Some(format!("its site is at {}, want {want}", show(r.site_at)))
        } else {
            None
        }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} of {}", self.op, self.lhs.text)?;
        if let Some(rhs) = &self.rhs {
            write!(f, " and {}", rhs.text)?;
        }
        write!(f, " at {}", self.at)
    }
}

/// Many runs of operations at one site: how many results were wrong, and the reports expected.
#[derive(Default)]
struct Run {
    wrong: usize,
    expected: Vec<Expected>,
}

impl Run {
    /// One run of `a op b`, at `at`, gave `got`.
    fn binary<T: Int, U: Int>(&mut self, op: Op, a: T, b: U, got: T, at: Site) {
        let (want, overflows) = a.model(op, b);
        self.wrong += usize::from(got != want);
        if overflows {
            self.expected.push(Expected::binary(op, a, b, at));
        }
    }
}

/// The first few items, for a failure message.
fn list<T: Display>(items: &[T]) -> String {
    let mut shown: Vec<String> = items.iter().take(4).map(|i| i.to_string()).collect();
    if items.len() > shown.len() {
        shown.push(format!("... ({} in all)", items.len()));
    }
    format!("[{}]", shown.join(", "))
}

/// What is wrong with `reports` if they are not exactly `expected`, in order.
fn compare(reports: &[Report], expected: &[Expected]) -> Option<String> {
    if reports.len() != expected.len() {
        return Some(format!(
            "{} reports {}, want {} {}",
            reports.len(),
            list(reports),
            expected.len(),
            list(expected)
        ));
    }
    let (i, why) = reports
        .iter()
        .zip(expected)
        .enumerate()
        .find_map(|(i, (r, e))| e.mismatch(r).map(|why| (i, why)))?;
    Some(format!("report {i}, {}: {why}", reports[i]))
}

#[derive(Default)]
struct Tester {
    checks: Checks,
    /// How often each site was reported, by address: whether its flag must be set next.
    counts: HashMap<usize, usize>,
    /// The site of every report so far, in order.
    sites: Vec<usize>,
}

impl Tester {
    /// The reports since the last call, and the first one whose flag does not say whether its
    /// site was reported before.
    fn take(&mut self) -> (Vec<Report>, Option<String>) {
        let reports = std::mem::take(&mut *REPORTS.lock().unwrap_or_else(PoisonError::into_inner));
        let mut wrong = None;
        for (i, r) in reports.iter().enumerate() {
            let count = self.counts.entry(r.site).or_default();
            if r.reported != (*count > 0) && wrong.is_none() {
                wrong = Some(format!(
                    "report {i}, {r}: the site was reported {count} times before"
                ));
            }
            *count += 1;
            self.sites.push(r.site);
        }
        (reports, wrong)
    }

    fn check(&mut self, name: &str, why: Option<String>) {
        let ok = why.is_none();
        self.checks.check(name, ok, move || why.unwrap_or_default());
    }

    /// `got` is `want`, and the reports since the last check are exactly `expected`, in order.
    fn expect<V: PartialEq + Debug>(&mut self, name: &str, got: V, want: V, expected: &[Expected]) {
        let (reports, state) = self.take();
        let why = if got != want {
            Some(format!(
                "got {got:?}, want {want:?} (reports {})",
                list(&reports)
            ))
        } else {
            compare(&reports, expected).or(state)
        };
        self.check(name, why);
    }

    /// Nothing overflowed: `got` is `want` and nothing was reported since the last check.
    fn none<V: PartialEq + Debug>(&mut self, name: &str, got: V, want: V) {
        self.expect(name, got, want, &[]);
    }

    /// `got` came from an operation whose model gives `want` and overflows: it is `want`, with
    /// one report, `expected()`.
    fn overflow<V: PartialEq + Debug>(
        &mut self,
        name: &str,
        got: V,
        (want, overflows): (V, bool),
        expected: impl FnOnce() -> Expected,
    ) {
        if overflows {
            self.expect(name, got, want, &[expected()]);
        } else {
            self.take();
            self.check(
                name,
                Some("the row does not overflow (a bug of this program)".into()),
            );
        }
    }

    /// `got` came from an operation whose model gives `want` without overflow: it is `want`,
    /// with no report.
    fn no_overflow<V: PartialEq + Debug>(
        &mut self,
        name: &str,
        got: V,
        (want, overflows): (V, bool),
        _: impl FnOnce() -> Expected,
    ) {
        if overflows {
            self.take();
            self.check(
                name,
                Some("the row overflows (a bug of this program)".into()),
            );
        } else {
            self.none(name, got, want);
        }
    }

    /// The reports since the last check are `run.expected` (at least one), all from one site
    /// that was never reported before: one address, its flag clear at the first report and set
    /// at the others. No result was wrong.
    fn repeated(&mut self, name: &str, run: Run) {
        let (reports, _) = self.take();
        let sites: HashSet<usize> = reports.iter().map(|r| r.site).collect();
        let fresh = reports.iter().enumerate().find(|&(i, r)| r.reported != (i > 0));
        let why = if run.expected.is_empty() {
            Some("nothing overflows (a bug of this program)".into())
        } else if run.wrong > 0 {
            Some(format!("{} results are not the wrapped ones", run.wrong))
        } else if let Some(why) = compare(&reports, &run.expected) {
            Some(why)
        } else if sites.len() != 1 {
            Some(format!(
                "the reports come from {} sites, want one",
                sites.len()
            ))
        } else {
            fresh.map(|(i, r)| format!("report {i}, {r}: want its flag {}", i > 0))
        };
        self.check(name, why);
    }

    /// The number of reports so far, for [`Tester::distinct_sites`].
    fn mark(&self) -> usize {
        self.sites.len()
    }

    /// The reports since `mark` all come from different sites.
    fn distinct_sites(&mut self, name: &str, mark: usize) {
        let sites = &self.sites[mark..];
        let distinct: HashSet<&usize> = sites.iter().collect();
        let why = (distinct.len() != sites.len() || sites.is_empty()).then(|| {
            format!(
                "{} reports come from {} distinct sites",
                sites.len(),
                distinct.len()
            )
        });
        self.check(name, why);
    }

    /// Exactly one report since the last check, whose `Display` is `want`.
    fn text<V>(&mut self, name: &str, _: V, want: &str) {
        let (reports, state) = self.take();
        let why = match &reports[..] {
            [r] if r.text == want => state,
            [r] => Some(format!("`{}`, want `{want}`", r.text)),
            _ => Some(format!("reports {}, want one", list(&reports))),
        };
        self.check(name, why);
    }

    /// `result` is a panic with `message` at the marker `/*@name*/`, and nothing was reported.
    fn panics<R: Debug>(&mut self, name: &str, result: Result<R, Caught>, message: &str) {
        let (reports, _) = self.take();
        if reports.is_empty() {
            self.checks.panicked(name, result, message, site(name));
        } else {
            let why = format!("reported {} before panicking", list(&reports));
            self.check(name, Some(why));
        }
    }
}

/// Checks an operation on each integer type `T` of a row: `all` or `signed`.
///
/// A row is `name, types, Op(lhs, rhs), |a, b| expression` or `name, types, Neg(lhs), |a|
/// expression`. `a` and `b` are `lhs` and `rhs` passed through `black_box`, the expression does
/// the operation on them. Its result must be the wrapped one by `Int::model` (or
/// `overflowing_neg`). With `overflow!`, it must report once, with these operands, at the
/// marker `/*@name*/` in the expression; with `no_overflow!`, never. The checks are named
/// `name_T`. All the operations of a row have the same location and different sites.
macro_rules! each_type {
    ($t:ident, $check:ident, $name:ident, all, $($row:tt)*) => {
        each_type!(
            $t, $check, $name, [i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize], $($row)*
        )
    };
    ($t:ident, $check:ident, $name:ident, signed, $($row:tt)*) => {
        each_type!($t, $check, $name, [i8 i16 i32 i64 i128 isize], $($row)*)
    };
    ($t:ident, $check:ident, $name:ident, [$($ty:ident)*], Neg($lhs:expr), |$a:ident| $e:expr) => {$({
        type T = $ty;
        let $a: T = $lhs;
        let model = $a.overflowing_neg();
        let expected = || Expected::neg($a, site(stringify!($name)));
        let $a = bb($a);
        let name = concat!(stringify!($name), "_", stringify!($ty));
        $t.$check(name, $e, model, expected);
    })*};
    (
        $t:ident, $check:ident, $name:ident, [$($ty:ident)*], $op:ident($lhs:expr, $rhs:expr),
        |$a:ident, $b:ident| $e:expr
    ) => {$({
        type T = $ty;
        let ($a, $b): (T, _) = ($lhs, $rhs);
        let model = $a.model(Op::$op, $b);
        let expected = || Expected::binary(Op::$op, $a, $b, site(stringify!($name)));
        let ($a, $b) = (bb($a), bb($b));
        let name = concat!(stringify!($name), "_", stringify!($ty));
        $t.$check(name, $e, model, expected);
    })*};
}

macro_rules! overflow {
    ($t:ident, $($row:tt)*) => { each_type!($t, overflow, $($row)*) };
}

macro_rules! no_overflow {
    ($t:ident, $($row:tt)*) => { each_type!($t, no_overflow, $($row)*) };
}

/// Checks one overflowing operation `Op(lhs, rhs)`, done by the expression on `a` and `b` (the
/// operands through `black_box`) after the marker `/*@name*/`: the result is `want`, and it
/// reports once, with these operands, at the marker.
macro_rules! one {
    ($t:ident, $name:ident, $op:ident($lhs:expr, $rhs:expr), |$a:ident, $b:ident| $e:expr, $want:expr) => {{
        let ($a, $b) = ($lhs, $rhs);
        let expected = [Expected::binary(Op::$op, $a, $b, site(stringify!($name)))];
        let ($a, $b) = (bb($a), bb($b));
        $t.expect(stringify!($name), $e, $want, &expected);
    }};
}

/// Checks an operation at one site run for each `b` in a range, with `a` fixed (both through
/// `black_box`): the results are the wrapped ones and the reports those of the overflowing
/// runs, in order, at the marker `/*@name*/`, from one site.
macro_rules! sweep {
    ($t:ident, $name:ident, $op:ident($lhs:expr, $b:ident in $range:expr), |$a:ident| $e:expr) => {{
        let (mut run, at) = (Run::default(), site(stringify!($name)));
        let $a = $lhs;
        for $b in $range {
            let got = {
                let ($a, $b) = (bb($a), bb($b));
                $e
            };
            run.binary(Op::$op, $a, $b, got, at);
        }
        $t.repeated(stringify!($name), run);
    }};
}

fn main() -> ExitCode {
    common::install_panic_hook();
    let mut t = Tester::default();
    t.none("nothing_at_startup", (), ());
    messages(&mut t);
    types(&mut t);
    let mark = t.mark();
    operators(&mut t);
    compound_assignments(&mut t);
    t.distinct_sites("operators_have_distinct_sites", mark);
    no_overflow(&mut t);
    display(&mut t);
    several_in_one_expression(&mut t);
    exhaustive_8_bit(&mut t);
    shifts(&mut t);
    let mark = t.mark();
    generic(&mut t);
    t.distinct_sites("generic_instances_have_distinct_sites", mark);
    track_caller(&mut t);
    inherited(&mut t);
    loops(&mut t);
    gvn_and_range_propagation(&mut t);
    still_panics(&mut t);
    t.none("nothing_left", (), ());
    t.checks.finish()
}

/// `OverflowOp::message()`, `operator()` and `Display`.
fn messages(t: &mut Tester) {
    let all = [
        (Op::Add, "attempt to add with overflow", "+"),
        (Op::Sub, "attempt to subtract with overflow", "-"),
        (Op::Mul, "attempt to multiply with overflow", "*"),
        (Op::Neg, "attempt to negate with overflow", "-"),
        (Op::Shl, "attempt to shift left with overflow", "<<"),
        (Op::Shr, "attempt to shift right with overflow", ">>"),
    ];
    for (op, message, operator) in all {
        let got = (op.message(), op.operator(), op.to_string());
        let want = (message, operator, message.to_string());
        t.checks.eq(&format!("op_{op:?}"), got, want);
    }
}

/// `IntegerType::name()`, `bits()`, `is_signed()` and `Display` of each type.
fn types(t: &mut Tester) {
    fn check<T: Int>(t: &mut Tester) {
        let ty = T::TY;
        let got = (ty.name(), ty.bits(), ty.is_signed(), ty.to_string());
        let want = (T::NAME, T::BITS, T::SIGNED, T::NAME.to_string());
        t.checks.eq(&format!("type_{}", T::NAME), got, want);
    }
    macro_rules! each {
        ($($ty:ident)*) => { $(check::<$ty>(t);)* };
    }
    each!(i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize);
}

/// Every operator on every integer type, overflowing once.
#[rustfmt::skip]
fn operators(t: &mut Tester) {
    overflow!(t, add, all, Add(T::MAX, 1 as T), |a, b| /*@add*/ a + b);
    overflow!(t, add_min, signed, Add(T::MIN, -1 as T), |a, b| /*@add_min*/ a + b);
    overflow!(t, sub, all, Sub(T::MIN, 1 as T), |a, b| /*@sub*/ a - b);
    overflow!(t, sub_max, signed, Sub(T::MAX, -1 as T), |a, b| /*@sub_max*/ a - b);
    overflow!(t, mul, all, Mul(T::MAX, 3 as T), |a, b| /*@mul*/ a * b);
    overflow!(t, mul_min, signed, Mul(T::MIN, -1 as T), |a, b| /*@mul_min*/ a * b);
    overflow!(t, neg, signed, Neg(T::MIN), |a| /*@neg*/ -a);
    // Shift amounts of other types keep their type in the report.
    overflow!(t, shl, all, Shl(1 as T, T::BITS), |a, b| /*@shl*/ a << b);
    overflow!(t, shr, all, Shr(T::MAX, T::BITS as u8 + 1), |a, b| /*@shr*/ a >> b);
}

/// Every compound assignment on every integer type, overflowing once.
#[rustfmt::skip]
fn compound_assignments(t: &mut Tester) {
    overflow!(t, add_assign, all, Add(T::MAX, 1 as T), |a, b| { let mut x = a; /*@add_assign*/ x += b; x });
    overflow!(t, sub_assign, all, Sub(T::MIN, 1 as T), |a, b| { let mut x = a; /*@sub_assign*/ x -= b; x });
    overflow!(t, mul_assign, all, Mul(T::MAX, 3 as T), |a, b| { let mut x = a; /*@mul_assign*/ x *= b; x });
    overflow!(t, shl_assign, all, Shl(1 as T, -1i64), |a, b| { let mut x = a; /*@shl_assign*/ x <<= b; x });
    overflow!(t, shr_assign, all, Shr(T::MAX, 2 * T::BITS as usize), |a, b| { let mut x = a; /*@shr_assign*/ x >>= b; x });
}

/// The same operations near the limits, without overflow: nothing is reported.
#[rustfmt::skip]
fn no_overflow(t: &mut Tester) {
    no_overflow!(t, add_ok, all, Add(T::MAX - 1, 1 as T), |a, b| a + b);
    no_overflow!(t, sub_ok, all, Sub(T::MIN + 1, 1 as T), |a, b| a - b);
    no_overflow!(t, mul_ok, all, Mul(T::MAX / 2, 2 as T), |a, b| a * b);
    no_overflow!(t, mul_min_ok, signed, Mul(T::MIN / 2, 2 as T), |a, b| a * b);
    no_overflow!(t, neg_ok, signed, Neg(T::MIN + 1), |a| -a);
    no_overflow!(t, shl_ok, all, Shl(1 as T, T::BITS - 1), |a, b| a << b);
    no_overflow!(t, shr_ok, all, Shr(T::MAX, T::BITS - 1), |a, b| a >> b);
    no_overflow!(t, add_assign_ok, all, Add(T::MAX - 1, 1 as T), |a, b| { let mut x = a; x += b; x });
}

/// The `Display` of a few reports: the message, then the operands with their types.
#[rustfmt::skip]
fn display(t: &mut Tester) {
    t.text("display_add_u8", bb(200u8) + bb(100), "attempt to add with overflow: 200_u8 + 100_u8");
    t.text("display_sub_u64", bb(0u64) - bb(1), "attempt to subtract with overflow: 0_u64 - 1_u64");
    t.text(
        "display_mul_i128",
        bb(i128::MIN) * bb(-1),
        "attempt to multiply with overflow: -170141183460469231731687303715884105728_i128 * -1_i128",
    );
    t.text("display_neg_i8", -bb(i8::MIN), "attempt to negate with overflow: -(-128_i8)");
    t.text("display_shl_u32_by_u8", bb(1u32) << bb(33u8), "attempt to shift left with overflow: 1_u32 << 33_u8");
    t.text("display_shr_isize_by_i64", bb(-1isize) >> bb(-1i64), "attempt to shift right with overflow: -1_isize >> -1_i64");
    t.text(
        "display_add_assign_u128",
        { let mut x = bb(u128::MAX); x += bb(1); x },
        "attempt to add with overflow: 340282366920938463463374607431768211455_u128 + 1_u128",
    );
    // For 64-bit targets.
    t.text("display_mul_usize", bb(usize::MAX) * bb(2), "attempt to multiply with overflow: 18446744073709551615_usize * 2_usize");
}

/// Two overflows in one expression are reported in evaluation order.
fn several_in_one_expression(t: &mut Tester) {
    // `a + b - c` is `(a + b) - c`: both spans start at `a`.
    let s = site("add_sub");
    let got = /*@add_sub*/ bb(i8::MAX) + bb(1) - bb(i8::MAX);
    let expected = [
        Expected::binary(Op::Add, i8::MAX, 1i8, s),
        Expected::binary(Op::Sub, i8::MIN, i8::MAX, s),
    ];
    t.expect("add_sub", got, 1, &expected);

    // The product is reported first, then the negation at its `-`. The span of an expression
    // in parentheses includes them.
    let got = /*@neg_of_mul*/ -/*@mul_in_neg*/(bb(i32::MIN) * bb(3));
    let expected = [
        Expected::binary(Op::Mul, i32::MIN, 3i32, site("mul_in_neg")),
        Expected::neg(i32::MIN.wrapping_mul(3), site("neg_of_mul")),
    ];
    t.expect("mul_then_neg", got, i32::MIN, &expected);

    // The right-hand side of a compound assignment is evaluated first.
    let mut x = bb(-1i8);
    /*@add_assign_outer*/
    x += /*@add_assign_rhs*/ bb(i8::MAX) + bb(1);
    let expected = [
        Expected::binary(Op::Add, i8::MAX, 1i8, site("add_assign_rhs")),
        Expected::binary(Op::Add, -1i8, i8::MIN, site("add_assign_outer")),
    ];
    t.expect("add_assign_rhs_then_outer", x, i8::MAX, &expected);
}

/// All 65536 pairs of the operands of one operation at one site, through `black_box`.
macro_rules! exhaustive {
    ($t:ident, $name:ident, $ty:ident, $op:ident, |$a:ident, $b:ident| $e:expr) => {{
        let (mut run, at) = (Run::default(), site(stringify!($name)));
        for $a in $ty::MIN..=$ty::MAX {
            for $b in $ty::MIN..=$ty::MAX {
                let got = {
                    let ($a, $b) = (bb($a), bb($b));
                    $e
                };
                run.binary(Op::$op, $a, $b, got, at);
            }
        }
        $t.repeated(stringify!($name), run);
    }};
}

/// `u8` and `i8` addition, subtraction and multiplication of all 65536 pairs: the result is
/// the wrapping one, and there is one report for each pair that overflows, with its operands.
#[rustfmt::skip]
fn exhaustive_8_bit(t: &mut Tester) {
    exhaustive!(t, exhaustive_add_u8, u8, Add, |a, b| /*@exhaustive_add_u8*/ a + b);
    exhaustive!(t, exhaustive_sub_u8, u8, Sub, |a, b| /*@exhaustive_sub_u8*/ a - b);
    exhaustive!(t, exhaustive_mul_u8, u8, Mul, |a, b| /*@exhaustive_mul_u8*/ a * b);
    exhaustive!(t, exhaustive_add_i8, i8, Add, |a, b| /*@exhaustive_add_i8*/ a + b);
    exhaustive!(t, exhaustive_sub_i8, i8, Sub, |a, b| /*@exhaustive_sub_i8*/ a - b);
    exhaustive!(t, exhaustive_mul_i8, i8, Mul, |a, b| /*@exhaustive_mul_i8*/ a * b);
}

/// Shifts by amounts of at least the bit width, also of other types and negative ones (which
/// count as unsigned): one report each, with the amount in its own type, and the amount is
/// masked as `wrapping_shl` does.
#[rustfmt::skip]
fn shifts(t: &mut Tester) {
    sweep!(t, shl_u8_by_every_u8, Shl(0b1000_0001u8, b in 0..=u8::MAX), |a| /*@shl_u8_by_every_u8*/ a << b);
    sweep!(t, shr_u8_by_every_u8, Shr(0b1000_0001u8, b in 0..=u8::MAX), |a| /*@shr_u8_by_every_u8*/ a >> b);
    sweep!(t, shl_i32_by_i32, Shl(3i32, b in -70..=70i32), |a| /*@shl_i32_by_i32*/ a << b);
    sweep!(t, shr_i64_by_every_i8, Shr(i64::MIN + 5, b in i8::MIN..=i8::MAX), |a| /*@shr_i64_by_every_i8*/ a >> b);

    // -1 as `u8` is 255, masked to 63.
    one!(t, shl_i64_by_minus_1_i8, Shl(1i64, -1i8), |a, b| /*@shl_i64_by_minus_1_i8*/ a << b, i64::MIN);
    // -31 as `u32` is 2^32 - 31, masked to 1.
    one!(t, shr_i32_by_minus_31, Shr(i32::MIN, -31i32), |a, b| /*@shr_i32_by_minus_31*/ a >> b, i32::MIN >> 1);
    // 2^64 + 3 is masked to 3.
    one!(t, shl_u128_by_huge_u128, Shl(1u128, (1u128 << 64) + 3), |a, b| /*@shl_u128_by_huge_u128*/ a << b, 8);
    // `usize::MAX` is masked to 15.
    one!(t, shr_i16_by_usize_max, Shr(i16::MIN, usize::MAX), |a, b| /*@shr_i16_by_usize_max*/ a >> b, -1);
    // `i128::MIN` is 2^127 as unsigned, masked to 0.
    one!(t, shl_u8_by_i128_min, Shl(1u8, i128::MIN), |a, b| /*@shl_u8_by_i128_min*/ a << b, 1);
    // `isize::MIN` is masked to 0.
    one!(t, shr_u64_by_isize_min, Shr(u64::MAX, isize::MIN), |a, b| /*@shr_u64_by_isize_min*/ a >> b, u64::MAX);

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

fn add_assign<T: AddAssign>(mut a: T, b: T) -> T {
    /*@generic_add_assign*/
    a += b;
    a
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

fn shl_assign<T: ShlAssign<u8>>(mut a: T, b: u8) -> T {
    /*@generic_shl_assign*/
    a <<= b;
    a
}

/// Checks a call of a generic function above on operands through `black_box`: its result is
/// `want`, and it reports `op` once, with the operands, at the operator in the generic function
/// (whose marker is `generic_` and the function's name), from a site in `core`'s
/// `#[track_caller]` impl at `core` if that was not inlined.
macro_rules! generic {
    ($t:ident, $name:ident, $f:ident($a:expr) = $want:expr, Neg in $core:ident) => {{
        let a = $a;
        let expected = Expected::neg(a, site(concat!("generic_", stringify!($f))));
        let expected = [expected.site_at(SiteAt::Tracked(common::$core))];
        $t.expect(stringify!($name), $f(bb(a)), $want, &expected);
    }};
    ($t:ident, $name:ident, $f:ident($a:expr, $b:expr) = $want:expr, $op:ident in $core:ident) => {{
        let (a, b) = ($a, $b);
        let expected = Expected::binary(Op::$op, a, b, site(concat!("generic_", stringify!($f))));
        let expected = [expected.site_at(SiteAt::Tracked(common::$core))];
        $t.expect(stringify!($name), $f(bb(a), bb(b)), $want, &expected);
    }};
}

/// Operators in generic code go through the `core::ops` impls, which inherit the overflow
/// checks and are `#[track_caller]`: they report at the operator in the generic function,
/// where `-Coverflow-checks=on` panics. Each instance has its own site.
#[rustfmt::skip]
fn generic(t: &mut Tester) {
    generic!(t, generic_add_i8, add(i8::MAX, 1i8) = i8::MIN, Add in CORE_OPS_ADD);
    generic!(t, generic_add_u32, add(u32::MAX, 2u32) = 1, Add in CORE_OPS_ADD);
    generic!(t, generic_add_i128, add(i128::MAX, 1i128) = i128::MIN, Add in CORE_OPS_ADD);
    generic!(t, generic_add_usize, add(usize::MAX, 1usize) = 0, Add in CORE_OPS_ADD);
    generic!(t, generic_sub_u16, sub(0u16, 1u16) = u16::MAX, Sub in CORE_OPS_SUB);
    generic!(t, generic_sub_isize, sub(isize::MIN, 1isize) = isize::MAX, Sub in CORE_OPS_SUB);
    generic!(t, generic_mul_i64, mul(i64::MAX, 2i64) = -2, Mul in CORE_OPS_MUL);
    generic!(t, generic_mul_u128, mul(u128::MAX, u128::MAX) = 1, Mul in CORE_OPS_MUL);
    generic!(t, generic_add_assign_u8, add_assign(u8::MAX, 2u8) = 1, Add in CORE_OPS_ADD_ASSIGN);
    generic!(t, generic_neg_i16, neg(i16::MIN) = i16::MIN, Neg in CORE_OPS_NEG);
    generic!(t, generic_neg_i128, neg(i128::MIN) = i128::MIN, Neg in CORE_OPS_NEG);
    generic!(t, generic_shl_u64, shl(3u64, 65u32) = 6, Shl in CORE_OPS_SHL);
    generic!(t, generic_shl_i8, shl(1i8, 8u32) = 1, Shl in CORE_OPS_SHL);
    generic!(t, generic_shr_usize, shr(usize::MAX, -1i8) = 1, Shr in CORE_OPS_SHR);
    generic!(t, generic_shr_i32, shr(-64i32, 33i8) = -32, Shr in CORE_OPS_SHR);
    generic!(t, generic_shl_assign_i32, shl_assign(1i32, 32u8) = 1, Shl in CORE_OPS_SHL_ASSIGN);
    t.none("generic_add_ok", add(bb(40u16), bb(2)), 42);
    t.none("generic_neg_ok", neg(bb(5i32)), -5);
}

#[track_caller]
#[inline(never)]
fn tracked_add(a: u8, b: u8) -> u8 {
    /*@tracked_add*/
    a + b
}

#[track_caller]
#[inline(never)]
fn tracked_neg(a: i16) -> i16 {
    /*@tracked_neg*/
    -a
}

/// In a `#[track_caller]` function that is not inlined, the report is at the caller, as a panic
/// would be (`report_overflow_at`, `report_neg_overflow_at`), and `site().location()` is the
/// operation in the function. Called twice, it reports twice from the same site, each time at
/// its caller.
fn track_caller(t: &mut Tester) {
    let mut run = Run::default();
    let got = /*@tracked_add_first*/ tracked_add(bb(200), bb(100));
    run.binary(Op::Add, 200u8, 100u8, got, site("tracked_add_first"));
    let got = /*@tracked_add_second*/ tracked_add(bb(255), bb(2));
    run.binary(Op::Add, 255u8, 2u8, got, site("tracked_add_second"));
    let tracked = SiteAt::Exactly(site("tracked_add"));
    run.expected = run
        .expected
        .into_iter()
        .map(|e| e.site_at(tracked))
        .collect();
    t.repeated("track_caller_add_twice", run);
    t.none("track_caller_add_ok", tracked_add(bb(200), bb(55)), 255);

    let got = /*@tracked_neg_call*/ tracked_neg(bb(i16::MIN));
    let expected = Expected::neg(i16::MIN, site("tracked_neg_call"));
    let expected = expected.site_at(SiteAt::Exactly(site("tracked_neg")));
    t.expect("track_caller_neg", got, i16::MIN, &[expected]);
}

/// What `Sum` or `Product` of `items` must give and report: `core` folds them with `op` from
/// `init`, at `at`.
fn fold<T: Int>(items: &[T], init: T, op: Op, at: Site) -> (T, Vec<Expected>) {
    let mut expected = Vec::new();
    let result = items.iter().fold(init, |acc, &x| {
        let (next, overflows) = acc.model(op, x);
        if overflows {
            expected.push(Expected::binary(op, acc, x, at));
        }
        next
    });
    (result, expected)
}

/// Checks that `core` inherits with `#[rustc_inherit_overflow_checks]`.
#[rustfmt::skip]
fn inherited(t: &mut Tester) {
    use common::*;
    macro_rules! abs {
        ($($ty:ident $core:ident),*) => {$({
            let expected = [Expected::neg($ty::MIN, $core)];
            t.expect(concat!("abs_", stringify!($ty)), bb($ty::MIN).abs(), $ty::MIN, &expected);
        })*};
    }
    abs!(i8 CORE_NUM_I8, i16 CORE_NUM_I16, i32 CORE_NUM_I32, i64 CORE_NUM_I64, i128 CORE_NUM_I128, isize CORE_NUM_ISIZE);
    t.none("abs_ok", bb(-5i32).abs(), 5);

    // With an exponent not known at compile time, `pow` squares the base while bits of the
    // exponent remain and multiplies the result by it for each bit set: these overflow in
    // exactly one multiplication. 2^40: squaring 2^16.
    let expected = [Expected::binary(Op::Mul, 1i32 << 16, 1i32 << 16, CORE_NUM_I32)];
    t.expect("pow_i32", bb(2i32).pow(bb(40)), 2i32.wrapping_pow(40), &expected);
    // 3^6: the result 3^2 times the base 3^4.
    let expected = [Expected::binary(Op::Mul, 9u8, 81u8, CORE_NUM_U8)];
    t.expect("pow_u8", bb(3u8).pow(bb(6)), 3u8.wrapping_pow(6), &expected);
    // 10^20: the result 10^4 times the base 10^16.
    let expected = [Expected::binary(Op::Mul, 10u64.pow(4), 10u64.pow(16), CORE_NUM_U64)];
    t.expect("pow_u64", bb(10u64).pow(bb(20)), 10u64.wrapping_pow(20), &expected);
    t.none("pow_ok", bb(3u8).pow(bb(5)), 243);

    // `one_less_than_next_power_of_two() + 1`, and `self + (rhs - self % rhs)`.
    let expected = [Expected::binary(Op::Add, u8::MAX, 1u8, CORE_NUM_U8)];
    t.expect("next_power_of_two_u8", bb(200u8).next_power_of_two(), 0, &expected);
    let expected = [Expected::binary(Op::Add, u32::MAX, 1u32, CORE_NUM_U32)];
    t.expect("next_power_of_two_u32", bb(u32::MAX / 2 + 2).next_power_of_two(), 0, &expected);
    let expected = [Expected::binary(Op::Add, u16::MAX, 1u16, CORE_NUM_U16)];
    t.expect("next_multiple_of_u16", bb(u16::MAX).next_multiple_of(bb(2)), 0, &expected);

    // By value, the closure in `Sum` and `Product` adds or multiplies; by reference, it calls
    // the `#[track_caller]` impls of `Add<&T>` and `Mul<&T>`, which call those of `Add` and
    // `Mul`. The closure's MIR comes from `core`, optimized when `core` was built, with these
    // impls inlined: either way, the site is the closure's.
    let s = CORE_SUM_PRODUCT;
    let items = [i32::MAX, 1];
    let (want, expected) = fold(&items, 0, Op::Add, s);
    t.expect("sum_ref_i32", bb(items).iter().sum::<i32>(), want, &expected);
    let items = [u64::MAX, 2];
    let (want, expected) = fold(&items, 0, Op::Add, s);
    t.expect("sum_u64", bb(items).into_iter().sum::<u64>(), want, &expected);
    let items = [i64::MAX, 2];
    let (want, expected) = fold(&items, 1, Op::Mul, s);
    t.expect("product_ref_i64", bb(items).iter().product::<i64>(), want, &expected);
    let items = [u16::MAX, u16::MAX];
    let (want, expected) = fold(&items, 1, Op::Mul, s);
    t.expect("product_u16", bb(items).into_iter().product::<u16>(), want, &expected);
    t.none("sum_ok", bb([1u8, 2, 3]).iter().sum::<u8>(), 6);
    t.none("product_ok", bb([-2i8, 4, 8]).into_iter().product::<i8>(), -64);

    // Several overflows in one sum or product: one report for each step that overflows.
    let items = [i32::MAX; 4];
    let (want, expected) = fold(&items, 0, Op::Add, s);
    t.expect("sum_overflows_twice", bb(items).iter().sum::<i32>(), want, &expected);
    let items: Vec<u8> = (1..=20).collect();
    let (want, expected) = fold(&items, 1, Op::Mul, s);
    t.expect("product_1_to_20_u8", (1..=bb(20u8)).product::<u8>(), want, &expected);
}

/// Reporting does not stop a loop: each overflowing iteration reports once, at the same site,
/// whose flag is set from the second report on.
#[rustfmt::skip]
fn loops(t: &mut Tester) {
    sweep!(t, loop_every_iteration, Add(u16::MAX, i in 1..=1000u16), |a| /*@loop_every_iteration*/ a + i);

    let (mut run, at) = (Run::default(), site("loop_mul_assign"));
    let mut x = bb(1u32);
    for _ in 0..100 {
        let before = x;
        /*@loop_mul_assign*/
        x *= bb(7);
        run.binary(Op::Mul, before, 7u32, x, at);
    }
    t.repeated("loop_mul_assign", run);

    let (mut run, at) = (Run::default(), site("loop_count_down"));
    let mut n = bb(5u8);
    for _ in 0..10 {
        let before = n;
        /*@loop_count_down*/
        n -= 1;
        run.binary(Op::Sub, before, 1u8, n, at);
    }
    t.repeated("loop_count_down", run);
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
    let expected = [Expected::binary(Op::Add, i32::MAX, 1i32, site("gvn_add"))];
    t.expect("gvn_add", got, (i32::MIN, true), &expected);
    t.none("gvn_add_ok", add_then_checked_add(bb(1), bb(2)), (3, false));
    let got = add_black_boxes_then_checked_add(bb(i32::MIN), bb(-1));
    let expected = [Expected::binary(
        Op::Add,
        i32::MIN,
        -1i32,
        site("gvn_add_black_box"),
    )];
    t.expect("gvn_add_black_box", got, (i32::MAX, true), &expected);
    let got = sub_then_overflowing_sub(bb(1), bb(2));
    let expected = [Expected::binary(Op::Sub, 1u64, 2u64, site("gvn_sub"))];
    t.expect("gvn_sub", got, (u64::MAX, true), &expected);
    let got = mul_then_checked_mul(bb(i16::MIN), bb(-1));
    let expected = [Expected::binary(Op::Mul, i16::MIN, -1i16, site("gvn_mul"))];
    t.expect("gvn_mul", got, (i16::MIN, true), &expected);
    let got = neg_then_checked_neg(bb(i8::MIN));
    let expected = [Expected::neg(i8::MIN, site("gvn_neg"))];
    t.expect("gvn_neg", got, (i8::MIN, true), &expected);
    let got = shl_then_checked_shl(bb(1), bb(33));
    let expected = [Expected::binary(Op::Shl, 1u32, 33u32, site("gvn_shl"))];
    t.expect("gvn_shl", got, (2, true), &expected);
    let got = add_then_compare(bb(u32::MAX), bb(2));
    let expected = [Expected::binary(
        Op::Add,
        u32::MAX,
        2u32,
        site("gvn_compare"),
    )];
    t.expect("gvn_compare", got, true, &expected);

    let (a, b) = (bb(i32::MAX), bb(2));
    let s = /*@gvn_inline*/ a + b;
    let none = a.checked_add(b).is_none();
    let expected = [Expected::binary(
        Op::Add,
        i32::MAX,
        2i32,
        site("gvn_inline"),
    )];
    t.expect("gvn_inline", (s, none), (i32::MIN + 1, true), &expected);
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
    one!(
        t,
        add_after_panics,
        Add(u8::MAX, 1u8),
        |a, b| /*@add_after_panics*/ a + b,
        0
    );
}
