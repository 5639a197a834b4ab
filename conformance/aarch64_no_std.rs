//! Conformance of `-Coverflow-checks=report` in a `no_std` crate for `aarch64-unknown-none`.
//!
//! The harness builds `core` from the toolchain's library source for `aarch64-unknown-none`
//! with `-Coverflow-checks=report`, as the Linux kernel builds it for arm64, then compiles this
//! crate against it to an object file and disassembles it. In every function below, the
//! overflow path must call the instance of `core::panic::overflow::report_overflow::<T, U>` (or
//! `report_neg_overflow::<T>`) noted on the function, reference no panic function, and continue
//! from the call to a `ret` with the wrapped result. The call's last argument, the site, must be
//! the address of a descriptor in writable data that records the operation and the type `T`.
//! The instances are internal to this crate, so LLVM may drop an argument that every call passes
//! as the same constant (the operand of a negation is always `MIN`; the site then comes earlier,
//! and the instance must read the site's location through that register), or specialize an
//! instance that one call uses for that call's site (the instance then loads the site itself).
//! The harness's table `AARCH64_FUNCTIONS` lists the same functions, operations and types.

#![no_std]

/// `report_overflow::<u32, u32>`, `Add`.
#[unsafe(no_mangle)]
pub extern "C" fn add(a: u32, b: u32) -> u32 {
    a + b
}

/// `report_overflow::<i64, i64>`, `Sub`.
#[unsafe(no_mangle)]
pub extern "C" fn sub_i64(a: i64, b: i64) -> i64 {
    a - b
}

/// `report_overflow::<u16, u16>`, `Mul`.
#[unsafe(no_mangle)]
pub extern "C" fn mul_u16(a: u16, b: u16) -> u16 {
    a * b
}

/// `report_neg_overflow::<i32>`, `Neg`.
#[unsafe(no_mangle)]
pub extern "C" fn neg_i32(a: i32) -> i32 {
    -a
}

/// `report_overflow::<u64, u32>`, `Shl`: the amount keeps its type.
#[unsafe(no_mangle)]
pub extern "C" fn shl_u64(a: u64, b: u32) -> u64 {
    a << b
}

/// `report_overflow::<i8, u32>`, `Shr`.
#[unsafe(no_mangle)]
pub extern "C" fn shr_i8(a: i8, b: u32) -> i8 {
    a >> b
}

/// `report_overflow::<isize, u8>`, `Shr`.
#[unsafe(no_mangle)]
pub extern "C" fn shr_isize_by_u8(a: isize, b: u8) -> isize {
    a >> b
}

/// `report_overflow::<u32, u32>`, `Add`, a compound assignment through a pointer.
#[unsafe(no_mangle)]
pub extern "C" fn add_assign(a: &mut u32, b: u32) {
    *a += b;
}

/// `report_overflow::<i128, i128>`, `Add`: each operand in a pair of registers, the site after
/// them.
#[unsafe(no_mangle)]
pub extern "C" fn add_i128(a: i128, b: i128) -> i128 {
    a + b
}

/// `report_overflow::<usize, usize>`, `Mul`.
#[unsafe(no_mangle)]
pub extern "C" fn mul_usize(a: usize, b: usize) -> usize {
    a * b
}

/// `report_neg_overflow::<i32>`, `Neg`, inherited by `i32::abs` from this crate.
#[unsafe(no_mangle)]
pub extern "C" fn abs_i32(a: i32) -> i32 {
    a.abs()
}

/// `report_overflow::<u32, u32>`, `Add`, three times, inherited by `Sum`: each report continues
/// the sum.
#[unsafe(no_mangle)]
pub extern "C" fn sum_u32(a: &[u32; 4]) -> u32 {
    a.iter().sum()
}
