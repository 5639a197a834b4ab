//! Conformance of `-Coverflow-checks=report` in a `no_std` crate for `aarch64-unknown-none`.
//!
//! The harness builds `core` from the toolchain's library source for `aarch64-unknown-none`
//! with `-Coverflow-checks=report`, as the Linux kernel builds it for arm64, then compiles this
//! crate against it to an object file and disassembles it. In every function below, the
//! overflow path must call the report entry point of the operation noted on each function
//! (`core::panicking::report_const::report_const_<op>_overflow`), reference no panic function,
//! and continue from the call to a `ret` with the wrapped result. The harness's table
//! `AARCH64_FUNCTIONS` lists the same functions and operations.

#![no_std]

/// `report_const_add_overflow`.
#[unsafe(no_mangle)]
pub extern "C" fn add(a: u32, b: u32) -> u32 {
    a + b
}

/// `report_const_sub_overflow`.
#[unsafe(no_mangle)]
pub extern "C" fn sub_i64(a: i64, b: i64) -> i64 {
    a - b
}

/// `report_const_mul_overflow`.
#[unsafe(no_mangle)]
pub extern "C" fn mul_u16(a: u16, b: u16) -> u16 {
    a * b
}

/// `report_const_neg_overflow`.
#[unsafe(no_mangle)]
pub extern "C" fn neg_i32(a: i32) -> i32 {
    -a
}

/// `report_const_shl_overflow`.
#[unsafe(no_mangle)]
pub extern "C" fn shl_u64(a: u64, b: u32) -> u64 {
    a << b
}

/// `report_const_shr_overflow`.
#[unsafe(no_mangle)]
pub extern "C" fn shr_i8(a: i8, b: u32) -> i8 {
    a >> b
}

/// `report_const_add_overflow`, a compound assignment through a pointer.
#[unsafe(no_mangle)]
pub extern "C" fn add_assign(a: &mut u32, b: u32) {
    *a += b;
}

/// `report_const_neg_overflow`, inherited by `i32::abs` from this crate.
#[unsafe(no_mangle)]
pub extern "C" fn abs_i32(a: i32) -> i32 {
    a.abs()
}

/// `report_const_add_overflow`, three times, inherited by `Sum`: each report continues the sum.
#[unsafe(no_mangle)]
pub extern "C" fn sum_u32(a: &[u32; 4]) -> u32 {
    a.iter().sum()
}
