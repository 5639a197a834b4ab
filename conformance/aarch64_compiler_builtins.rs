//! An empty `compiler_builtins` for `aarch64_no_std.rs`, as the Linux kernel has one.
//!
//! Every `no_std` crate depends on a crate named `compiler_builtins`; the toolchain ships none
//! for `aarch64-unknown-none`, and the object file needs none of its functions.

#![allow(internal_features)]
#![feature(compiler_builtins)]
#![compiler_builtins]
#![no_builtins]
#![no_std]
