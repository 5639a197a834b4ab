//! Conformance of merged overflow reports in loops (`-Coverflow-checks=report`).
//!
//! With `-Zmerge-overflow-reports`, where loop vectorization runs (opt-level 2 and 3 on a target
//! with vector registers), rustc merges the reports of an innermost loop whose trip count has a
//! bound, which calls nothing that could observe the handler, and whose every check runs in each
//! iteration on operands that depend only on induction variables, loop invariants and memory the
//! loop does not write, or is an unsigned sum of bounded values in a loop left only at its end.
//! Such a site reports once per exit from the loop (normal exit, `break`, `return`, `?`, the
//! edge to a panic) if any of its checks failed in that run of the loop, with the operands of
//! its first overflow, before anything after the exit; the pending sites of one exit report in
//! the order of the sites in the body. Any other loop reports each overflow where it happens.
//! The values are the wrapped ones either way.
//!
//! The harness compiles this file with `--cfg merged_reports` for the variants where merging
//! is expected; without it every loop must report in place, which is what opt-level 0 does even
//! with `-Zmerge-overflow-reports`. So
//! a variant that expects merging fails its "merged" cases if the compiler does not merge.
//!
//! Each case is an `#[inline(never)]` function with its inputs through `black_box`. A model
//! runs the same loop with `overflowing_*` and says which reports the case must make, in order:
//! operation, operands (value and type) and location, which is the marker comment `/*@tag*/`
//! right before the operation, looked up in this file's text. A panic that a case expects is
//! recorded in the same list of events, so that a report after it, or a missing one, is seen.
//! A loop with one overflow reports the same list merged or not; the `when_*` cases tell them
//! apart: their loop writes a buffer that the handler looks at, so a report shows how many
//! elements the loop had written when it was made. Prints one line per check and
//! `N passed, N failed` last.

#![feature(integer_overflow_report)]

mod common;

use core::panic::{IntegerOverflow, OverflowOp as Op};
use std::fmt::{self, Debug, Display};
use std::hint::black_box as bb;
use std::ops::RangeBounds;
use std::panic::AssertUnwindSafe;
use std::process::ExitCode;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use common::{Checks, Site};

/// Whether the loops that qualify must have their reports merged in this build.
const MERGING: bool = cfg!(merged_reports);

/// The text of this file, to find the `/*@tag*/` markers in.
const SOURCE: &str = include_str!("merged.rs");

/// The site of the operation after the marker `/*@tag*/` in this file.
fn site(tag: &str) -> Site {
    common::marked(file!(), SOURCE, tag)
}

/// A report or a panic, as the handler and the panic hook record them, in the order they come.
#[derive(Clone, Debug, PartialEq)]
enum Event {
    Report {
        op: Op,
        /// The operands' `Display`, e.g. `4294967295_u32`.
        lhs: String,
        rhs: Option<String>,
        at: (String, u32, u32),
        /// How many elements of the watched buffer were written when the handler ran, if one
        /// is watched: where in the loop the report was made.
        written: Option<usize>,
    },
    Panic {
        at: (String, u32, u32),
    },
}

impl Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |(file, line, col): &(String, u32, u32)| format!("{file}:{line}:{col}");
        match self {
            Event::Report {
                op,
                lhs,
                rhs,
                at,
                written,
            } => {
                write!(f, "{op:?}({lhs}")?;
                if let Some(rhs) = rhs {
                    write!(f, ", {rhs}")?;
                }
                write!(f, ") at {}", show(at))?;
                match written {
                    Some(written) => write!(f, " after {written} writes"),
                    None => Ok(()),
                }
            }
            Event::Panic { at } => write!(f, "panic at {}", show(at)),
        }
    }
}

fn at(site: Site) -> (String, u32, u32) {
    (site.file.to_string(), site.line, site.col)
}

static EVENTS: Mutex<Vec<Event>> = Mutex::new(Vec::new());

fn push(event: Event) {
    EVENTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(event);
}

fn take() -> Vec<Event> {
    std::mem::take(&mut *EVENTS.lock().unwrap_or_else(PoisonError::into_inner))
}

/// The buffer that the handler counts the written elements of (those that are not
/// `UNWRITTEN`), and its length; null if none.
static WATCHED: AtomicPtr<u32> = AtomicPtr::new(std::ptr::null_mut());
static WATCHED_LEN: AtomicUsize = AtomicUsize::new(0);
const UNWRITTEN: u32 = 0xdead_beef;

/// How many elements of the watched buffer are written.
fn written() -> Option<usize> {
    let buffer = WATCHED.load(Ordering::SeqCst);
    if buffer.is_null() {
        return None;
    }
    let len = WATCHED_LEN.load(Ordering::SeqCst);
    // SAFETY: `when` watches a buffer of `len` elements while only raw pointers write it.
    let written = (0..len).filter(|&i| unsafe { buffer.add(i).read() } != UNWRITTEN);
    Some(written.count())
}

/// The handler under test: records the report and returns.
#[core::panic::report_integer_overflow]
fn record(overflow: &IntegerOverflow) {
    let location = overflow.location();
    push(Event::Report {
        op: overflow.op(),
        lhs: overflow.lhs().to_string(),
        rhs: overflow.rhs().map(|rhs| rhs.to_string()),
        at: (
            location.file().to_string(),
            location.line(),
            location.column(),
        ),
        written: written(),
    });
}

/// Adds a panic event to the list before the hook of `common`, which records the panics that
/// `common::catch` catches and reports the others.
fn install_panic_hook() {
    common::install_panic_hook();
    let next = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Some(l) = info.location() {
            push(Event::Panic {
                at: (l.file().to_string(), l.line(), l.column()),
            });
        }
        next(info);
    }));
}

/// A primitive integer type and the model of its operations.
trait Int: Copy + Debug + Display + PartialEq + Default {
    const NAME: &'static str;

    /// The value as the unsigned type of the same width, widened (for a shift amount).
    fn unsigned(self) -> u128;

    /// `self op rhs` by the standard methods: the wrapped result and whether it overflows.
    fn model<U: Int>(self, op: Op, rhs: U) -> (Self, bool);
}

macro_rules! int {
    ($($t:ident $unsigned:ident,)*) => {$(
        impl Int for $t {
            const NAME: &'static str = stringify!($t);

            fn unsigned(self) -> u128 {
                self as $unsigned as u128
            }

            fn model<U: Int>(self, op: Op, rhs: U) -> (Self, bool) {
                let amount = rhs.unsigned();
                let same = || {
                    assert_eq!(U::NAME, Self::NAME, "{op:?} of {} and {}", Self::NAME, U::NAME);
                    amount as $unsigned as $t
                };
                match op {
                    Op::Add => self.overflowing_add(same()),
                    Op::Sub => self.overflowing_sub(same()),
                    Op::Mul => self.overflowing_mul(same()),
                    Op::Neg => self.overflowing_neg(),
                    Op::Shl => (self.wrapping_shl(amount as u32), amount >= u128::from(Self::BITS)),
                    Op::Shr => (self.wrapping_shr(amount as u32), amount >= u128::from(Self::BITS)),
                    _ => panic!("no model of {op:?}"),
                }
            }
        }
    )*};
}

int! { i8 u8, i16 u16, i32 u32, i64 u64, u8 u8, u16 u16, u32 u32, u64 u64, usize usize, }

/// What a case must report: runs the model of a loop and collects the events it expects.
///
/// In a merged loop, a site's first overflow waits until [`Model::exit`], which reports the
/// waiting sites in the order of their indices (their order in the loop's body). In a loop that
/// is not merged, each overflow is reported at once.
struct Model {
    merged: bool,
    /// The first overflow of each site since the last exit, by the site's index.
    pending: Vec<Option<Event>>,
    want: Vec<Event>,
    /// How many operations overflowed, to check that the inputs do what a case says.
    overflows: usize,
    /// How many elements of the watched buffer the loop has written, if one is watched.
    written: Option<usize>,
}

impl Model {
    /// The model of a loop that the compiler must merge if it merges at all in this build.
    fn mergeable() -> Model {
        Model::new(MERGING)
    }

    /// The model of a loop that must report in place.
    fn in_place() -> Model {
        Model::new(false)
    }

    fn new(merged: bool) -> Model {
        Model {
            merged,
            pending: Vec::new(),
            want: Vec::new(),
            overflows: 0,
            written: None,
        }
    }

    /// `a op b` (or `-a`, ignoring `b`) at the site with index `index`, at `site`: the wrapped
    /// result.
    fn op<T: Int, U: Int>(&mut self, index: usize, site: Site, op: Op, a: T, b: U) -> T {
        let (result, overflows) = a.model(op, b);
        if overflows {
            self.overflows += 1;
            let rhs = (op != Op::Neg).then(|| format!("{b}_{}", U::NAME));
            let event = Event::Report {
                op,
                lhs: format!("{a}_{}", T::NAME),
                rhs,
                at: at(site),
                written: self.written,
            };
            if !self.merged {
                self.want.push(event);
            } else {
                if self.pending.len() <= index {
                    self.pending.resize(index + 1, None);
                }
                self.pending[index].get_or_insert(event);
            }
        }
        result
    }

    /// The loop is left: the waiting sites report, in order.
    fn exit(&mut self) {
        let written = self.written;
        let reports = self.pending.drain(..).flatten().map(|mut event| {
            if let Event::Report { written: w, .. } = &mut event {
                *w = written;
            }
            event
        });
        self.want.extend(reports);
    }

    /// The loop is left by a panic at `site`, after the reports of the waiting sites.
    fn panic(&mut self, site: Site) {
        self.exit();
        self.want.push(Event::Panic { at: at(site) });
    }
}

/// The first few events, for a failure message.
fn list(events: &[Event]) -> String {
    let mut shown: Vec<String> = events.iter().take(4).map(|e| e.to_string()).collect();
    if events.len() > shown.len() {
        shown.push(format!("... ({} in all)", events.len()));
    }
    format!("[{}]", shown.join(", "))
}

/// What is wrong with `events` if they are not exactly `want`, in order.
fn compare(events: &[Event], want: &[Event]) -> Option<String> {
    if events.len() != want.len() {
        return Some(format!(
            "{} events {}, want {} {}",
            events.len(),
            list(events),
            want.len(),
            list(want)
        ));
    }
    let i = events.iter().zip(want).position(|(e, w)| e != w)?;
    Some(format!(
        "event {i} of {} is {}, want {}",
        events.len(),
        events[i],
        want[i]
    ))
}

/// What is wrong with the values `got` if they are not `want`: the first element that differs.
fn slices<T: PartialEq + Debug>(got: &[T], want: &[T]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} values, want {}", got.len(), want.len()));
    }
    let i = got.iter().zip(want).position(|(g, w)| g != w)?;
    Some(format!(
        "value {i} of {} is {:?}, want {:?}",
        got.len(),
        got[i],
        want[i]
    ))
}

fn values<V: PartialEq + Debug>(got: V, want: V) -> Option<String> {
    (got != want).then(|| format!("got {got:?}, want {want:?}"))
}

struct Tester {
    checks: Checks,
}

impl Tester {
    /// The values were right unless `wrong` says why, and the events since the last check are
    /// exactly the model's. `overflows` is how many overflows the case's inputs are meant to
    /// have: another count is a bug of this program.
    fn expect(
        &mut self,
        name: &str,
        wrong: Option<String>,
        model: Model,
        overflows: impl RangeBounds<usize> + Debug,
    ) {
        assert!(
            model.pending.iter().all(Option::is_none),
            "{name}: the model was not left"
        );
        let events = take();
        let why = if !overflows.contains(&model.overflows) {
            Some(format!(
                "the inputs overflow {} times, want {overflows:?} (a bug of this program)",
                model.overflows
            ))
        } else {
            wrong.or_else(|| compare(&events, &model.want))
        };
        let ok = why.is_none();
        self.checks.check(name, ok, move || why.unwrap_or_default());
    }
}

fn main() -> ExitCode {
    install_panic_hook();
    println!("merged reports expected: {MERGING}");
    let mut t = Tester {
        checks: Checks::default(),
    };
    let events = take();
    t.checks.eq("nothing_at_startup", events, vec![]);
    elementwise(&mut t);
    when(&mut t);
    two_sites(&mut t);
    nested(&mut t);
    early_exits(&mut t);
    out_of_bounds(&mut t);
    sums(&mut t);
    not_merged(&mut t);
    let events = take();
    t.checks.eq("nothing_left", events, vec![]);
    t.checks.finish()
}

// Element-wise loops: `out[i] = a[i] op b[i]`. Each qualifies for merging.

#[inline(never)]
fn add_u32(a: &[u32], b: &[u32], out: &mut [u32]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = /*@add_u32*/ x + y;
    }
}

#[inline(never)]
fn sub_i32(a: &[i32], b: &[i32], out: &mut [i32]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = /*@sub_i32*/ x - y;
    }
}

#[inline(never)]
fn mul_u16(a: &[u16], b: &[u16], out: &mut [u16]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = /*@mul_u16*/ x * y;
    }
}

#[inline(never)]
fn mul_i64(a: &[i64], b: &[i64], out: &mut [i64]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = /*@mul_i64*/ x * y;
    }
}

#[inline(never)]
fn add_u8(a: &[u8], b: &[u8], out: &mut [u8]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = /*@add_u8*/ x + y;
    }
}

#[inline(never)]
fn shl_u32(a: &[u32], b: &[u32], out: &mut [u32]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = /*@shl_u32*/ x << y;
    }
}

/// `b` is not used.
#[inline(never)]
fn neg_i32(a: &[i32], _: &[i32], out: &mut [i32]) {
    for (o, &x) in out.iter_mut().zip(a) {
        *o = /*@neg_i32*/ -x;
    }
}

/// An element-wise function and its inputs: element `i` of `a` and `b` is `ok(i)`, or `bad(i)`
/// where it must overflow (different operands at each `i`, so that the first can be told).
struct Elementwise<T, U> {
    tag: &'static str,
    op: Op,
    /// Whether the compiler merges this loop when it merges: not a multiplication wider than 32
    /// bits, whose `*.with.overflow` the vectorizer cannot widen.
    mergeable: bool,
    f: fn(&[T], &[U], &mut [T]),
    ok: fn(usize) -> (T, U),
    bad: fn(usize) -> (T, U),
}

const LENGTHS: [usize; 8] = [0, 1, 2, 7, 8, 64, 1003, 4099];

/// Where the inputs of a loop of `n` iterations overflow, by name.
fn places(n: usize) -> Vec<(&'static str, Vec<usize>)> {
    if n == 0 {
        return vec![("none", vec![])];
    }
    let mut several = vec![n / 4, n / 2, n - 1];
    several.dedup();
    vec![
        ("none", vec![]),
        ("first", vec![0]),
        ("middle", vec![n / 2]),
        ("last", vec![n - 1]),
        ("several", several),
        ("all", (0..n).collect()),
    ]
}

fn run_elementwise<T: Int, U: Int>(t: &mut Tester, case: Elementwise<T, U>) {
    let at = site(case.tag);
    for n in LENGTHS {
        for (place, positions) in places(n) {
            let (a, b): (Vec<T>, Vec<U>) = (0..n)
                .map(|i| match positions.contains(&i) {
                    true => (case.bad)(i),
                    false => (case.ok)(i),
                })
                .unzip();
            let mut model = match case.mergeable {
                true => Model::mergeable(),
                false => Model::in_place(),
            };
            let want: Vec<T> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| model.op(0, at, case.op, x, y))
                .collect();
            model.exit();
            let mut out = vec![T::default(); n];
            (case.f)(bb(&a), bb(&b), &mut out);
            let name = format!("{}_{place}_n{n}", case.tag);
            let count = positions.len();
            t.expect(&name, slices(&out, &want), model, count..=count);
        }
    }
}

/// Overflowing in no iteration, the first, the middle, the last, several or all, for each
/// length in `LENGTHS`: one report (the first overflow's operands) when merged.
fn elementwise(t: &mut Tester) {
    run_elementwise(
        t,
        Elementwise {
            tag: "add_u32",
            op: Op::Add,
            mergeable: true,
            f: add_u32,
            ok: |i| (i as u32 * 7 % 1000, 3),
            bad: |i| (u32::MAX - i as u32 % 5, 100 + i as u32),
        },
    );
    run_elementwise(
        t,
        Elementwise {
            tag: "sub_i32",
            op: Op::Sub,
            mergeable: true,
            f: sub_i32,
            ok: |i| (i as i32 - 500, 5),
            bad: |i| (i32::MIN + i as i32 % 5, 100 + i as i32),
        },
    );
    run_elementwise(
        t,
        Elementwise {
            tag: "mul_u16",
            op: Op::Mul,
            mergeable: true,
            f: mul_u16,
            ok: |i| (i as u16 % 200, 3),
            bad: |i| (300 + i as u16 % 100, 1000 + i as u16 % 50),
        },
    );
    run_elementwise(
        t,
        Elementwise {
            tag: "mul_i64",
            op: Op::Mul,
            mergeable: false,
            f: mul_i64,
            ok: |i| (i as i64, -3),
            bad: |i| (i64::MAX / 3 + i as i64, -4 - i as i64 % 3),
        },
    );
    run_elementwise(
        t,
        Elementwise {
            tag: "add_u8",
            op: Op::Add,
            mergeable: true,
            f: add_u8,
            ok: |i| (i as u8 % 100, 1),
            bad: |i| (200 + i as u8 % 50, 60 + i as u8 % 7),
        },
    );
    run_elementwise(
        t,
        Elementwise {
            tag: "shl_u32",
            op: Op::Shl,
            mergeable: true,
            f: shl_u32,
            ok: |i| (i as u32, i as u32 % 32),
            bad: |i| (i as u32, 32 + i as u32 % 200),
        },
    );
    run_elementwise(
        t,
        Elementwise {
            tag: "neg_i32",
            op: Op::Neg,
            mergeable: true,
            f: neg_i32,
            ok: |i| (i as i32 - 5, 0),
            bad: |_| (i32::MIN, 0),
        },
    );
}

/// Element-wise into a buffer that the handler watches, leaving the loop after the element
/// `stop`.
///
/// # Safety
/// `out` is valid for writes of `a.len()` elements and overlaps neither `a` nor `b`.
#[inline(never)]
unsafe fn add_watched(a: &[u32], b: &[u32], out: *mut u32, stop: usize) {
    let n = a.len().min(b.len());
    for i in 0..n {
        // SAFETY: `i < a.len()`, for which the caller made `out` valid.
        unsafe {
            out.add(i).write(/*@add_watched*/ a[i] + b[i])
        };
        if i == stop {
            break;
        }
    }
}

/// When a report is made, seen by the handler in the elements written so far: in place, as
/// many as iterations before the overflowing one; merged, all that the run of the loop wrote.
/// With a single overflow, only this tells a merged report from one in place.
fn when(t: &mut Tester) {
    let at = site("add_watched");
    for n in [1usize, 2, 7, 1000] {
        let mut cases = vec![
            ("first", vec![0], None),
            ("middle", vec![n / 2], None),
            ("last", vec![n - 1], None),
        ];
        if n > 1 {
            cases.push(("first_and_last", vec![0, n - 1], None));
        }
        let stop = n / 2;
        cases.push(("break_at_overflow", vec![stop], Some(stop)));
        if stop > 0 {
            cases.push(("break_after_overflow", vec![0], Some(stop)));
        }
        if stop + 1 < n {
            cases.push(("break_before_overflow", vec![stop + 1], Some(stop)));
        }
        for (place, positions, stop) in cases {
            let (a, b): (Vec<u32>, Vec<u32>) = (0..n)
                .map(|i| match positions.contains(&i) {
                    true => (u32::MAX - i as u32 % 5, 100 + i as u32),
                    false => (i as u32, 3),
                })
                .unzip();
            let end = stop.map_or(n, |stop| stop + 1);
            let mut model = Model::mergeable();
            let mut want = vec![UNWRITTEN; n];
            for i in 0..end {
                model.written = Some(i);
                want[i] = model.op(0, at, Op::Add, a[i], b[i]);
            }
            model.written = Some(end);
            model.exit();
            let mut out = vec![UNWRITTEN; n];
            let buffer = out.as_mut_ptr();
            WATCHED_LEN.store(n, Ordering::SeqCst);
            WATCHED.store(buffer, Ordering::SeqCst);
            // SAFETY: `out` has `n` elements, and is another allocation than `a` and `b`.
            unsafe { add_watched(bb(&a), bb(&b), bb(buffer), bb(stop.unwrap_or(usize::MAX))) };
            WATCHED.store(std::ptr::null_mut(), Ordering::SeqCst);
            let count = positions.iter().filter(|&&i| i < end).count();
            let name = format!("when_{place}_n{n}");
            t.expect(&name, slices(&out, &want), model, count..=count);
        }
    }
}

/// Two sites in one loop: a product, then a sum of it.
#[inline(never)]
fn mul_add(a: &[i32], b: &[i32], c: &[i32], out: &mut [i32]) {
    for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c) {
        let p = /*@mul_add_mul*/ x * y;
        *o = /*@mul_add_add*/ p + z;
    }
}

/// At the exit, the product's report comes before the sum's, also when the sum overflowed in
/// an earlier iteration than the product; each with its first overflow's operands.
fn two_sites(t: &mut Tester) {
    let (at_mul, at_add) = (site("mul_add_mul"), site("mul_add_add"));
    // Where the product overflows, and where the sum does (and the product not).
    let cases: &[(&str, &[usize], &[usize])] = &[
        ("none", &[], &[]),
        ("mul_only", &[3, 5], &[]),
        ("add_only", &[], &[2, 6]),
        ("add_first", &[5], &[1]),
        ("mul_first", &[1, 4], &[5]),
        ("same_iteration", &[2], &[2]),
    ];
    for n in [7, 1000] {
        for &(name, muls, adds) in cases {
            let scale = |&i: &usize| i * n / 7;
            let (muls, adds): (Vec<usize>, Vec<usize>) = (
                muls.iter().map(scale).collect(),
                adds.iter().map(scale).collect(),
            );
            let mut a = vec![0i32; n];
            let mut b = vec![0i32; n];
            let mut c = vec![0i32; n];
            for i in 0..n {
                let k = i as i32;
                (a[i], b[i], c[i]) = match (muls.contains(&i), adds.contains(&i)) {
                    // 1e10 wraps to 1410065408, plus about 1e9 overflows.
                    (true, true) => (100_000 + k, 100_000, 1_000_000_000 + k),
                    (true, false) => (100_000 + k, 100_000, k),
                    (false, true) => (40_000 + k, 50_000, 1_000_000_000 + k),
                    (false, false) => (k, 3, -k),
                };
            }
            let mut model = Model::mergeable();
            let mut want = vec![0; n];
            for i in 0..n {
                let p = model.op(0, at_mul, Op::Mul, a[i], b[i]);
                want[i] = model.op(1, at_add, Op::Add, p, c[i]);
            }
            model.exit();
            let mut out = vec![0; n];
            mul_add(bb(&a), bb(&b), bb(&c), &mut out);
            let count = muls.len() + adds.len();
            let name = format!("two_sites_{name}_n{n}");
            t.expect(&name, slices(&out, &want), model, count..=count);
        }
    }
}

/// An element-wise loop in a loop over rows.
#[inline(never)]
fn nested_add(a: &[u32], b: &[u32], out: &mut [u32], cols: usize) {
    let rows = out
        .chunks_exact_mut(cols)
        .zip(a.chunks_exact(cols))
        .zip(b.chunks_exact(cols));
    for ((o, a), b) in rows {
        for ((o, &x), &y) in o.iter_mut().zip(a).zip(b) {
            *o = /*@nested_add*/ x + y;
        }
    }
}

/// One report per run of the inner loop that overflowed, with its first overflow.
fn nested(t: &mut Tester) {
    let at = site("nested_add");
    let every_row: Vec<(usize, usize)> = (0..50).map(|r| (r, r % 7)).collect();
    let shapes: &[(&str, usize, usize, &[(usize, usize)])] = &[
        ("one", 1, 1, &[(0, 0)]),
        ("none", 8, 16, &[]),
        (
            "some_rows",
            8,
            16,
            &[(0, 3), (0, 9), (2, 15), (5, 0), (5, 1), (7, 15)],
        ),
        (
            "long_rows",
            3,
            1000,
            &[(0, 999), (1, 0), (1, 500), (2, 1), (2, 998)],
        ),
        ("every_row", 50, 7, &every_row),
    ];
    for &(name, rows, cols, places) in shapes {
        let n = rows * cols;
        let (a, b): (Vec<u32>, Vec<u32>) = (0..n)
            .map(|i| match places.contains(&(i / cols, i % cols)) {
                true => (u32::MAX - i as u32 % 3, 10 + i as u32),
                false => (i as u32, 1),
            })
            .unzip();
        let mut model = Model::mergeable();
        let mut want = vec![0; n];
        for r in 0..rows {
            for i in r * cols..(r + 1) * cols {
                want[i] = model.op(0, at, Op::Add, a[i], b[i]);
            }
            model.exit();
        }
        let mut out = vec![0; n];
        nested_add(bb(&a), bb(&b), &mut out, bb(cols));
        let name = format!("nested_{name}_{rows}x{cols}");
        let count = places.len();
        t.expect(&name, slices(&out, &want), model, count..=count);
    }
}

/// Leaves the loop by `break` after the product of the element equal to `stop`.
#[inline(never)]
fn break_after(a: &[i32], b: &[i32], out: &mut [i32], stop: i32) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = /*@break_after*/ x * y;
        if x == stop {
            break;
        }
    }
}

/// Leaves the loop by `break` before the product of the element equal to `stop`.
#[inline(never)]
fn break_before(a: &[i32], b: &[i32], out: &mut [i32], stop: i32) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        if x == stop {
            break;
        }
        *o = /*@break_before*/ x * y;
    }
}

/// Returns the index of the element equal to `stop`, after its product.
#[inline(never)]
fn return_after(a: &[i32], b: &[i32], out: &mut [i32], stop: i32) -> Option<usize> {
    let n = out.len().min(a.len()).min(b.len());
    for i in 0..n {
        out[i] = /*@return_after*/ a[i] * b[i];
        if a[i] == stop {
            return Some(i);
        }
    }
    None
}

/// `?` on an `Option` before the product.
#[inline(never)]
fn question_option(a: &[i32], b: &[Option<i32>], out: &mut [i32]) -> Option<()> {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = /*@question_option*/ x * y?;
    }
    Some(())
}

/// `?` on a `Result` after the product.
#[inline(never)]
fn question_result(a: &[i32], b: &[i32], c: &[Result<(), u8>], out: &mut [i32]) -> Result<(), u8> {
    for (((o, &x), &y), &c) in out.iter_mut().zip(a).zip(b).zip(c) {
        *o = /*@question_result*/ x * y;
        c?;
    }
    Ok(())
}

/// The ways out of a loop before its end, each after overflows before the exit, in the exiting
/// iteration and after it (which must not report): the reports of the run so far, at the exit.
fn early_exits(t: &mut Tester) {
    for n in [1usize, 7, 1000] {
        let mut stops = vec![0, n / 2, n - 1];
        stops.dedup();
        for stop in stops {
            let mut overflow_sets = vec![vec![], vec![stop]];
            if stop > 0 {
                overflow_sets.push(vec![stop - 1]);
                overflow_sets.push(vec![0, stop]);
            }
            if stop + 1 < n {
                overflow_sets.push(vec![stop + 1]);
                overflow_sets.push(vec![stop, stop + 1]);
            }
            for overflows in overflow_sets {
                early_exit(t, n, stop, &overflows);
            }
        }
    }
}

fn early_exit(t: &mut Tester, n: usize, stop: usize, overflows: &[usize]) {
    const STOP: i32 = -777;
    let a: Vec<i32> = (0..n)
        .map(|i| if i == stop { STOP } else { 1000 + i as i32 % 7 })
        .collect();
    let b: Vec<i32> = (0..n)
        .map(|i| {
            if overflows.contains(&i) {
                10_000_000 + i as i32
            } else {
                5
            }
        })
        .collect();
    let suffix = format!("stop{stop}_over{overflows:?}_n{n}").replace(", ", "_");
    // The overflows up to the exit, which the model counts.
    let before = overflows.iter().filter(|&&i| i <= stop).count();
    let before_strict = overflows.iter().filter(|&&i| i < stop).count();

    // `break` after and before the product, and `return` after it.
    for kind in ["break_after", "break_before", "return_after"] {
        let at = site(kind);
        let mut model = Model::mergeable();
        let mut want = vec![0; n];
        for i in 0..n {
            if kind == "break_before" && i == stop {
                break;
            }
            want[i] = model.op(0, at, Op::Mul, a[i], b[i]);
            if i == stop {
                break;
            }
        }
        model.exit();
        let mut out = vec![0; n];
        let wrong = match kind {
            "break_after" => {
                break_after(bb(&a), bb(&b), &mut out, bb(STOP));
                None
            }
            "break_before" => {
                break_before(bb(&a), bb(&b), &mut out, bb(STOP));
                None
            }
            _ => values(return_after(bb(&a), bb(&b), &mut out, bb(STOP)), Some(stop)),
        };
        let count = if kind == "break_before" {
            before_strict
        } else {
            before
        };
        let wrong = slices(&out, &want).or(wrong);
        t.expect(&format!("{kind}_{suffix}"), wrong, model, count..=count);
    }

    // `?` on `None` in place of the element `stop` of `b`, before the product.
    let at = site("question_option");
    let b_opt: Vec<Option<i32>> = (0..n).map(|i| (i != stop).then_some(b[i])).collect();
    let mut model = Model::mergeable();
    let mut want = vec![0; n];
    for i in 0..stop {
        want[i] = model.op(0, at, Op::Mul, a[i], b[i]);
    }
    model.exit();
    let mut out = vec![0; n];
    let got = question_option(bb(&a), bb(&b_opt), &mut out);
    let wrong = slices(&out, &want).or(values(got, None));
    t.expect(
        &format!("question_option_{suffix}"),
        wrong,
        model,
        before_strict..=before_strict,
    );

    // `?` on `Err` at the element `stop`, after the product.
    let at = site("question_result");
    let c: Vec<Result<(), u8>> = (0..n)
        .map(|i| if i == stop { Err(7) } else { Ok(()) })
        .collect();
    let mut model = Model::mergeable();
    let mut want = vec![0; n];
    for i in 0..=stop {
        want[i] = model.op(0, at, Op::Mul, a[i], b[i]);
    }
    model.exit();
    let mut out = vec![0; n];
    let got = question_result(bb(&a), bb(&b), bb(&c), &mut out);
    let wrong = slices(&out, &want).or(values(got, Err(7)));
    t.expect(
        &format!("question_result_{suffix}"),
        wrong,
        model,
        before..=before,
    );
}

/// Element-wise on gathered elements: an index out of bounds panics.
#[inline(never)]
fn gather_mul(v: &[i32], idx: &[usize], out: &mut [i32]) {
    for (o, &i) in out.iter_mut().zip(idx) {
        *o = /*@gather_mul*/ v[i] * 1000;
    }
}

/// The panic of a bounds check leaves the loop: the reports of the run so far come before it.
fn out_of_bounds(t: &mut Tester) {
    let at = site("gather_mul");
    let v: Vec<i32> = (0..8)
        .map(|i| if i % 2 == 1 { 3_000_000 + i } else { i })
        .collect();
    // The indices: odd ones overflow, 99 is out of bounds.
    let cases: &[(&str, &[usize], usize)] = &[
        ("before_any_overflow", &[0, 2, 99, 1, 3], 0),
        ("after_one", &[0, 1, 2, 99, 4], 1),
        ("after_several", &[0, 3, 2, 5, 7, 4, 99, 1], 3),
        ("first_of_all", &[99, 1, 3], 0),
        ("no_panic", &[1, 2, 3, 4, 5, 6, 7, 0], 4),
    ];
    for &(name, idx, overflows) in cases {
        let mut model = Model::mergeable();
        let mut want = vec![0; idx.len()];
        let mut message = None;
        for (o, &i) in want.iter_mut().zip(idx) {
            if i >= v.len() {
                model.panic(at);
                message = Some(format!(
                    "index out of bounds: the len is {} but the index is {i}",
                    v.len()
                ));
                break;
            }
            *o = model.op(0, at, Op::Mul, v[i], 1000);
        }
        if message.is_none() {
            model.exit();
        }
        let mut out = vec![0; idx.len()];
        let got = common::catch(AssertUnwindSafe(|| gather_mul(bb(&v), bb(idx), &mut out)));
        let got_message = got.err().map(|c| c.message.unwrap_or_default());
        let wrong = slices(&out, &want).or(values(got_message, message));
        t.expect(
            &format!("out_of_bounds_{name}"),
            wrong,
            model,
            overflows..=overflows,
        );
    }
}

// Loops that must not be merged: every overflow reports where it happens.

/// Multiplies the elements of `a` before its first 0 by `k`. The loop does not know the length
/// of `a`: its trip count has no bound.
///
/// # Safety
/// `a` has a 0, and `out` is at least as long as `a`.
#[inline(never)]
unsafe fn until_zero(a: &[u32], k: u32, out: &mut [u32]) {
    let mut i = 0;
    loop {
        // SAFETY: `i` is at most the index of the first 0 in `a`, and `out` is as long.
        let x = unsafe { *a.get_unchecked(i) };
        if x == 0 {
            break;
        }
        unsafe {
            *out.get_unchecked_mut(i) = /*@until_zero*/ x * k
        };
        i = i.wrapping_add(1);
    }
}

/// The number of steps from `x` to 1 in the Collatz sequence, modulo 256.
#[inline(never)]
fn collatz(mut x: u32) -> u8 {
    let mut steps = 0u8;
    while x != 1 {
        x = if x % 2 == 0 {
            x / 2
        } else {
            /*@collatz_mul*/
            3 * x + 1
        };
        /*@collatz_steps*/
        steps += 1;
    }
    steps
}

static OBSERVED: AtomicU32 = AtomicU32::new(0);

/// Has a side effect that the handler could see.
#[inline(never)]
fn observe(x: u32) {
    OBSERVED.fetch_add(x, Ordering::Relaxed);
}

/// Element-wise, but calls a function that writes a static.
#[inline(never)]
fn add_observed(a: &[u32], b: &[u32], out: &mut [u32]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = /*@add_observed*/ x + y;
        observe(*o);
    }
}

// Unsigned sums of bounded values, in loops left only through their latch: each qualifies. A
// `u32` sum of bytes can wrap at most once in 16843009 of them, and did if it ends below its
// start; one of `u16`s in 65537, so longer runs are rescanned after the loop.

#[inline(never)]
fn sum_bytes(a: &[u8], start: u32) -> u32 {
    let mut sum = start;
    for &x in a {
        /*@sum_bytes*/
        sum += x as u32;
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

#[inline(never)]
fn sum_u32_u64(a: &[u32], start: u64) -> u64 {
    let mut sum = start;
    for &x in a {
        /*@sum_u32_u64*/
        sum += x as u64;
    }
    sum
}

/// One sum's case: the model of `sum += x` over `a` from `start`, against `f`.
fn run_sum<T: Int, S: Int>(
    t: &mut Tester,
    name: &str,
    tag: &str,
    (a, start): (&[T], S),
    f: impl Fn(&[T], S) -> S,
    overflows: usize,
) where
    T: Into<S>,
{
    let at = site(tag);
    let mut model = Model::mergeable();
    let want = a
        .iter()
        .fold(start, |s, &x| model.op(0, at, Op::Add, s, x.into()));
    model.exit();
    let wrong = values(f(bb(a), bb(start)), want);
    t.expect(name, wrong, model, overflows..=overflows);
}

/// Starts for a sum over `a` whose total is `total`: wrapping at no add, the first, the one in
/// the middle, the last; with the number of overflows.
fn starts(a: &[u64], max: u64) -> Vec<(&'static str, u64, usize)> {
    let total: u64 = a.iter().sum();
    let mut starts = vec![("none", max - total, 0)];
    let n = a.len();
    if n > 0 {
        for (place, i) in [("first", 0), ("middle", n / 2), ("last", n - 1)] {
            if a[i] > 0 {
                let before: u64 = a[..i].iter().sum();
                starts.push((place, max - before - a[i] + 1, 1));
            }
        }
    }
    starts
}

fn sums(t: &mut Tester) {
    for n in LENGTHS {
        let a: Vec<u8> = (0..n).map(|i| (i * 37 % 256) as u8).collect();
        let wide: Vec<u64> = a.iter().map(|&x| x as u64).collect();
        for (place, start, overflows) in starts(&wide, u32::MAX as u64) {
            let name = format!("sum_bytes_{place}_n{n}");
            let start = start as u32;
            run_sum(t, &name, "sum_bytes", (&a, start), sum_bytes, overflows);
        }
        let a: Vec<u32> = a.iter().map(|&x| x as u32 * 0x0100_0001).collect();
        let wide: Vec<u64> = a.iter().map(|&x| x as u64).collect();
        for (place, start, overflows) in starts(&wide, u64::MAX) {
            let name = format!("sum_u32_u64_{place}_n{n}");
            let f = sum_u32_u64;
            run_sum(t, &name, "sum_u32_u64", (&a, start), f, overflows);
        }
    }
    // Runs longer than 65537 `u16`s: none, one and three overflows.
    for (name, fill, start, overflows) in [
        ("sum_u16_long_none", 1u16, 0u32, 0),
        ("sum_u16_long_late", 1, u32::MAX - 199_990, 1),
        ("sum_u16_long_three", u16::MAX, 0, 3),
    ] {
        let a = vec![fill; 200_000];
        run_sum(t, name, "sum_u16", (&a, start), sum_u16, overflows);
    }
}

/// An accumulator that may wrap in every iteration.
#[inline(never)]
fn sum_u8(a: &[u8]) -> u8 {
    let mut sum = 0;
    for &x in a {
        /*@sum_u8*/
        sum += x;
    }
    sum
}

/// A product that could be merged, added to an accumulator that cannot: neither is merged.
#[inline(never)]
fn dot_i32(a: &[i32], b: &[i32]) -> i32 {
    let mut sum = 0;
    for (&x, &y) in a.iter().zip(b) {
        /*@dot_add*/
        sum += /*@dot_mul*/ x * y;
    }
    sum
}

/// A histogram: the loop writes the memory of the operand.
#[inline(never)]
fn histogram(a: &[u8], counts: &mut [u8; 256]) {
    for &x in a {
        /*@histogram*/
        counts[x as usize] += 1;
    }
}

/// A check that runs only in some iterations.
#[inline(never)]
fn conditional_mul(a: &[i32], b: &[i32], c: &[bool], out: &mut [i32]) {
    for (((o, &x), &y), &c) in out.iter_mut().zip(a).zip(b).zip(c) {
        if c {
            *o = /*@conditional_mul*/ x * y;
        }
    }
}

fn not_merged(t: &mut Tester) {
    for n in [7usize, 1000] {
        let over = [1, n / 2, n - 2];
        // Unknown trip count.
        let at = site("until_zero");
        let mut a: Vec<u32> = (0..n)
            .map(|i| {
                if over.contains(&i) {
                    1 << 30 | i as u32
                } else {
                    i as u32 + 1
                }
            })
            .collect();
        a[n - 1] = 0;
        let mut model = Model::in_place();
        let mut want = vec![0; n];
        for i in 0..n - 1 {
            want[i] = model.op(0, at, Op::Mul, a[i], 5u32);
        }
        let mut out = vec![0; n];
        // SAFETY: `a` ends with 0, `out` is as long.
        unsafe { until_zero(bb(&a), bb(5), &mut out) };
        t.expect(
            &format!("unknown_trip_count_n{n}"),
            slices(&out, &want),
            model,
            3..=3,
        );

        // A call with a side effect.
        let at = site("add_observed");
        let (a, b): (Vec<u32>, Vec<u32>) = (0..n)
            .map(|i| match over.contains(&i) {
                true => (u32::MAX - i as u32, 100 + i as u32),
                false => (i as u32, 1),
            })
            .unzip();
        let mut model = Model::in_place();
        let want: Vec<u32> = (0..n)
            .map(|i| model.op(0, at, Op::Add, a[i], b[i]))
            .collect();
        let observed = want.iter().fold(0u32, |s, &x| s.wrapping_add(x));
        let mut out = vec![0; n];
        let before = OBSERVED.load(Ordering::Relaxed);
        add_observed(bb(&a), bb(&b), &mut out);
        let sum = OBSERVED.load(Ordering::Relaxed).wrapping_sub(before);
        let wrong = slices(&out, &want).or(values(sum, observed));
        t.expect(&format!("call_with_side_effect_n{n}"), wrong, model, 3..=3);

        // An accumulator.
        let at = site("sum_u8");
        let a: Vec<u8> = (0..n).map(|i| (i * 37 % 256) as u8).collect();
        let mut model = Model::in_place();
        let want = a.iter().fold(0u8, |s, &x| model.op(0, at, Op::Add, s, x));
        let wrong = values(sum_u8(bb(&a)), want);
        t.expect(&format!("accumulator_n{n}"), wrong, model, 1..);

        // A dot product: the products' site qualifies, the sum's does not.
        let (at_mul, at_add) = (site("dot_mul"), site("dot_add"));
        let (a, b): (Vec<i32>, Vec<i32>) = (0..n)
            .map(|i| match over.contains(&i) {
                true => (100_000 + i as i32, 100_000),
                false => ((i as i32 - 3) * 10_000, 30_000),
            })
            .unzip();
        let mut model = Model::in_place();
        let want = (0..n).fold(0i32, |s, i| {
            let p = model.op(0, at_mul, Op::Mul, a[i], b[i]);
            model.op(1, at_add, Op::Add, s, p)
        });
        let wrong = values(dot_i32(bb(&a), bb(&b)), want);
        t.expect(&format!("dot_product_n{n}"), wrong, model, 4..);

        // A histogram with `u8` counts.
        let at = site("histogram");
        let a: Vec<u8> = (0..n).map(|i| (i % 3) as u8).collect();
        let mut model = Model::in_place();
        let mut want = [0u8; 256];
        for &x in &a {
            want[x as usize] = model.op(0, at, Op::Add, want[x as usize], 1u8);
        }
        let mut counts = [0u8; 256];
        histogram(bb(&a), &mut counts);
        let overflows = if n > 256 * 3 { 1.. } else { 0.. };
        t.expect(
            &format!("histogram_n{n}"),
            slices(&counts, &want),
            model,
            overflows,
        );

        // A conditional check: overflows in iterations where it does not run do not report.
        let at = site("conditional_mul");
        let (a, b): (Vec<i32>, Vec<i32>) = (0..n)
            .map(|i| match over.contains(&i) || i == n / 3 {
                true => (100_000 + i as i32, 100_000),
                false => (i as i32, 3),
            })
            .unzip();
        let c: Vec<bool> = (0..n).map(|i| i != n / 3).collect();
        let mut model = Model::in_place();
        let want: Vec<i32> = (0..n)
            .map(|i| match c[i] {
                true => model.op(0, at, Op::Mul, a[i], b[i]),
                false => 0,
            })
            .collect();
        let mut out = vec![0; n];
        conditional_mul(bb(&a), bb(&b), bb(&c), &mut out);
        t.expect(
            &format!("conditional_n{n}"),
            slices(&out, &want),
            model,
            3..=3,
        );
    }

    // Collatz: the trip count is unknown and the operands are carried from one iteration to
    // the next. 27 takes 111 steps, 77031 350 (`steps` wraps once).
    for (x, overflows) in [(27u32, 0), (77031, 1)] {
        let (at_mul, at_steps) = (site("collatz_mul"), site("collatz_steps"));
        let mut model = Model::in_place();
        let (mut y, mut steps) = (x, 0u8);
        while y != 1 {
            y = if y % 2 == 0 {
                y / 2
            } else {
                let p = model.op(0, at_mul, Op::Mul, 3u32, y);
                model.op(1, at_mul, Op::Add, p, 1u32)
            };
            steps = model.op(2, at_steps, Op::Add, steps, 1u8);
        }
        let wrong = values(collatz(bb(x)), steps);
        t.expect(&format!("collatz_{x}"), wrong, model, overflows..=overflows);
    }
}
