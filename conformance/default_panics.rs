//! Conformance of `-Coverflow-checks=report` without a handler: the default one panics.
//!
//! The harness compiles this file with `-Coverflow-checks=report` and, as the reference, with
//! `-Coverflow-checks=on`, at opt-levels 0, 2, 3 and 3 with fat LTO. In both modes every
//! overflowing operation must panic with today's message (a `&str` or `String` payload) at
//! the operation's location: the `/*@tag*/` marker right before it in this file, or for checks
//! inherited by `core`, the constants in `common.rs` (which this program thus verifies against
//! `-Coverflow-checks=on`). Division and bounds checks panic as always. Prints one line per
//! check and `N passed, N failed` last.

mod common;

use std::hint::black_box as bb;
use std::ops::{Add, Neg, Shl};
use std::process::ExitCode;

use common::{Caught, Checks, Site, catch};

/// The text of this file, to find the `/*@tag*/` markers in.
const SOURCE: &str = include_str!("default_panics.rs");

/// The site of the operation after the marker `/*@tag*/` in this file.
fn site(tag: &str) -> Site {
    common::marked(file!(), SOURCE, tag)
}

struct Tester {
    checks: Checks,
}

impl Tester {
    /// `result` is a panic with `message` at the marker `/*@name*/`.
    fn panics<R: std::fmt::Debug>(&mut self, name: &str, result: Result<R, Caught>, message: &str) {
        self.checks.panicked(name, result, message, site(name));
    }
}

fn add<T: Add<Output = T>>(a: T, b: T) -> T {
    /*@generic_add*/
    a + b
}

fn neg<T: Neg<Output = T>>(a: T) -> T {
    /*@generic_neg*/
    -a
}

fn shl<T: Shl<u32, Output = T>>(a: T, b: u32) -> T {
    /*@generic_shl*/
    a << b
}

/// Never inlined: the overflow check in it reports through `report_overflow_at` with its
/// caller's location, where the default handler must panic.
#[track_caller]
#[inline(never)]
fn tracked_add(a: u8, b: u8) -> u8 {
    a + b
}

fn main() -> ExitCode {
    common::install_panic_hook();
    let mut t = Tester {
        checks: Checks::default(),
    };
    let add_message = "attempt to add with overflow";

    // The operators, in this file.
    let got = catch(|| /*@add*/ bb(i32::MAX) + bb(1));
    t.panics("add", got, add_message);
    let got = catch(|| /*@add_u8*/ bb(200u8) + bb(100));
    t.panics("add_u8", got, add_message);
    let got = catch(|| /*@sub*/ bb(0u64) - bb(1));
    t.panics("sub", got, "attempt to subtract with overflow");
    let got = catch(|| /*@mul*/ bb(i128::MIN) * bb(-1));
    t.panics("mul", got, "attempt to multiply with overflow");
    let got = catch(|| /*@neg*/ -bb(isize::MIN));
    t.panics("neg", got, "attempt to negate with overflow");
    let got = catch(|| /*@shl*/ bb(1u16) << bb(16));
    t.panics("shl", got, "attempt to shift left with overflow");
    let got = catch(|| /*@shr*/ bb(-1i8) >> bb(-1));
    t.panics("shr", got, "attempt to shift right with overflow");
    // The span of an expression in parentheses includes them.
    let got = catch(|| -/*@mul_in_parens*/(bb(i32::MIN) * bb(3)));
    t.panics("mul_in_parens", got, "attempt to multiply with overflow");
    let got = catch(|| {
        let mut x = bb(usize::MAX);
        /*@add_assign*/
        x += bb(1);
        x
    });
    t.panics("add_assign", got, add_message);
    let got = catch(|| {
        let mut x = bb(3u32);
        /*@shl_assign*/
        x <<= bb(32);
        x
    });
    t.panics("shl_assign", got, "attempt to shift left with overflow");

    // Generic code: the `core::ops` impls are `#[track_caller]`.
    let got = catch(|| add(bb(u32::MAX), bb(1)));
    t.checks
        .panicked("generic_add", got, add_message, site("generic_add"));
    let got = catch(|| neg(bb(i64::MIN)));
    let message = "attempt to negate with overflow";
    t.checks
        .panicked("generic_neg", got, message, site("generic_neg"));
    let got = catch(|| shl(bb(1i8), bb(9)));
    let message = "attempt to shift left with overflow";
    t.checks
        .panicked("generic_shl", got, message, site("generic_shl"));

    // A `#[track_caller]` function of this file panics at its caller.
    let got = catch(|| /*@tracked_add*/ tracked_add(bb(200), bb(100)));
    t.panics("tracked_add", got, add_message);

    // Checks inherited by `core`, at the sites that `report.rs` expects as well.
    let message = "attempt to negate with overflow";
    let got = catch(|| bb(i32::MIN).abs());
    t.checks
        .panicked("abs_i32", got, message, common::CORE_NUM_I32);
    let got = catch(|| bb(i8::MIN).abs());
    t.checks
        .panicked("abs_i8", got, message, common::CORE_NUM_I8);
    let got = catch(|| bb(isize::MIN).abs());
    t.checks
        .panicked("abs_isize", got, message, common::CORE_NUM_ISIZE);
    let message = "attempt to multiply with overflow";
    let got = catch(|| bb(2i32).pow(bb(40)));
    t.checks
        .panicked("pow_i32", got, message, common::CORE_NUM_I32);
    let got = catch(|| bb(3u8).pow(bb(6)));
    t.checks
        .panicked("pow_u8", got, message, common::CORE_NUM_U8);
    let got = catch(|| bb(10u64).pow(bb(20)));
    t.checks
        .panicked("pow_u64", got, message, common::CORE_NUM_U64);
    let got = catch(|| bb(200u8).next_power_of_two());
    t.checks.panicked(
        "next_power_of_two_u8",
        got,
        add_message,
        common::CORE_NUM_U8,
    );
    let got = catch(|| bb(u16::MAX).next_multiple_of(bb(2)));
    t.checks.panicked(
        "next_multiple_of_u16",
        got,
        add_message,
        common::CORE_NUM_U16,
    );
    let got = catch(|| bb([i32::MAX, 1]).iter().sum::<i32>());
    t.checks
        .panicked("sum_ref_i32", got, add_message, common::CORE_SUM_PRODUCT);
    let got = catch(|| bb([u16::MAX, 2]).into_iter().product::<u16>());
    let message = "attempt to multiply with overflow";
    t.checks
        .panicked("product_u16", got, message, common::CORE_SUM_PRODUCT);

    // Not optional overflow checks: these panic in every mode.
    let got = catch(|| /*@div_by_zero*/ bb(1i32) / bb(0));
    t.panics("div_by_zero", got, "attempt to divide by zero");
    let got = catch(|| /*@div_min_by_minus_1*/ bb(i32::MIN) / bb(-1));
    t.panics("div_min_by_minus_1", got, "attempt to divide with overflow");
    let got = catch(|| /*@rem_min_by_minus_1*/ bb(i8::MIN) % bb(-1));
    let message = "attempt to calculate the remainder with overflow";
    t.panics("rem_min_by_minus_1", got, message);
    let got = catch(|| /*@index_out_of_bounds*/ bb([1, 2, 3])[bb(5)]);
    let message = "index out of bounds: the len is 3 but the index is 5";
    t.panics("index_out_of_bounds", got, message);

    // Nothing panics without overflow, and the program goes on after the panics above.
    let got = catch(|| bb(i32::MAX - 1) + bb(1));
    t.checks
        .check("add_ok", matches!(got, Ok(i32::MAX)), || format!("{got:?}"));
    let got = catch(|| bb(i32::MIN + 1).abs());
    t.checks
        .check("abs_ok", matches!(got, Ok(i32::MAX)), || format!("{got:?}"));
    t.checks.finish()
}
