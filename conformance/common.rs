//! Shared by the x86_64 conformance programs: counting checks, finding marked sites, catching panics.
//!
//! Each program includes this file as `mod common;`. A program prints one line per check,
//! `PASS name` or `FAIL name: why`, and last `N passed, N failed`, which the harness
//! (`harness/src/conformance.rs`) parses.

// Each program uses a different part of this module.
#![allow(dead_code)]

use std::any::Any;
use std::fmt::{self, Debug};
use std::panic::{self, UnwindSafe};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

/// Counts checks and prints one line for each.
#[derive(Default)]
pub struct Checks {
    passed: usize,
    failed: usize,
}

impl Checks {
    /// Records one check: prints `PASS name`, or `FAIL name: why` with `why` computed only then.
    pub fn check(&mut self, name: &str, ok: bool, why: impl FnOnce() -> String) {
        if ok {
            self.passed += 1;
            println!("PASS {name}");
        } else {
            self.failed += 1;
            println!("FAIL {name}: {}", why());
        }
    }

    /// Checks that `got == want`.
    pub fn eq<V: PartialEq + Debug>(&mut self, name: &str, got: V, want: V) {
        let ok = got == want;
        self.check(name, ok, || format!("got {got:?}, want {want:?}"));
    }

    /// Checks that `result` is a panic with exactly `message` at `site`.
    pub fn panicked<R: Debug>(
        &mut self,
        name: &str,
        result: Result<R, Caught>,
        message: &str,
        site: Site,
    ) {
        match result {
            Ok(value) => self.check(name, false, || {
                format!("returned {value:?}, want a panic `{message}` at {site}")
            }),
            Err(caught) => {
                let ok = caught.message.as_deref() == Some(message)
                    && caught
                        .location
                        .as_ref()
                        .is_some_and(|(file, line, col)| site.matches(file, *line, *col));
                self.check(name, ok, || {
                    format!("panicked with {caught}, want `{message}` at {site}")
                });
            }
        }
    }

    /// Prints the final `N passed, N failed` line; fails the process if any check failed.
    pub fn finish(self) -> ExitCode {
        println!("{} passed, {} failed", self.passed, self.failed);
        if self.failed == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }
}

/// An expected source location, compared with a [`core::panic::Location`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    /// The file exactly as `Location::file()` gives it, or with [`Site::suffix`] its end.
    pub file: &'static str,
    /// Whether `file` is a path suffix (for `core`, whose absolute path depends on the build).
    pub suffix: bool,
    pub line: u32,
    pub col: u32,
}

impl Site {
    /// A site in `core`, by its path from the source root, e.g. `library/core/src/num/mod.rs`.
    pub const fn core(file: &'static str, line: u32, col: u32) -> Site {
        Site {
            file,
            suffix: true,
            line,
            col,
        }
    }

    pub fn matches(&self, file: &str, line: u32, col: u32) -> bool {
        let file_ok = if self.suffix {
            file.strip_suffix(self.file)
                .is_some_and(|prefix| prefix.is_empty() || prefix.ends_with('/'))
        } else {
            file == self.file
        };
        file_ok && line == self.line && col == self.col
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dots = if self.suffix { ".../" } else { "" };
        write!(f, "{dots}{}:{}:{}", self.file, self.line, self.col)
    }
}

/// The site of the code right after the marker comment `/*@tag*/` and any whitespace after it
/// (rustfmt puts a marker before a statement on a line of its own).
///
/// `source` must be the text of `file`, from `include_str!`. Lines and columns count from 1,
/// columns in characters, as `Location` does. Panics if the marker is missing or not unique, or
/// if the line has a tab before the site (rustc counts a tab as more than one column).
pub fn marked(file: &'static str, source: &str, tag: &str) -> Site {
    let needle = format!("/*@{tag}*/");
    let mut found = source.match_indices(&needle);
    let Some((at, _)) = found.next() else {
        panic!("no marker {needle} in {file}");
    };
    assert!(
        found.next().is_none(),
        "marker {needle} appears twice in {file}"
    );
    let after = &source[at + needle.len()..];
    let start = at + needle.len() + (after.len() - after.trim_start().len());
    let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
    let prefix = &source[line_start..start];
    assert!(
        !prefix.contains('\t'),
        "a tab before marker {needle} in {file}"
    );
    Site {
        file,
        suffix: false,
        line: source[..start].matches('\n').count() as u32 + 1,
        col: prefix.chars().count() as u32 + 1,
    }
}

/// The `int_impl!`/`uint_impl!` invocation in `core/src/num/mod.rs` for each integer type: the
/// location of a failed check inherited by `abs`, `pow`, `next_power_of_two` and so on.
///
/// Hand-checked against Rust 1.96's `library/core`, and against the panics of
/// `-Coverflow-checks=on` by `default_panics.rs`, which the harness runs in that mode too.
pub const CORE_NUM_I8: Site = Site::core("library/core/src/num/mod.rs", 342, 5);
pub const CORE_NUM_I16: Site = Site::core("library/core/src/num/mod.rs", 366, 5);
pub const CORE_NUM_I32: Site = Site::core("library/core/src/num/mod.rs", 390, 5);
pub const CORE_NUM_I64: Site = Site::core("library/core/src/num/mod.rs", 414, 5);
pub const CORE_NUM_I128: Site = Site::core("library/core/src/num/mod.rs", 438, 5);
/// For 64-bit targets.
pub const CORE_NUM_ISIZE: Site = Site::core("library/core/src/num/mod.rs", 515, 5);
pub const CORE_NUM_U8: Site = Site::core("library/core/src/num/mod.rs", 542, 5);
pub const CORE_NUM_U16: Site = Site::core("library/core/src/num/mod.rs", 1184, 5);
pub const CORE_NUM_U32: Site = Site::core("library/core/src/num/mod.rs", 1239, 5);
pub const CORE_NUM_U64: Site = Site::core("library/core/src/num/mod.rs", 1270, 5);
pub const CORE_NUM_U128: Site = Site::core("library/core/src/num/mod.rs", 1301, 5);
/// For 64-bit targets.
pub const CORE_NUM_USIZE: Site = Site::core("library/core/src/num/mod.rs", 1396, 5);
/// `integer_sum_product!` in `core/src/iter/traits/accum.rs`: `Sum` and `Product` of integers.
pub const CORE_SUM_PRODUCT: Site = Site::core("library/core/src/iter/traits/accum.rs", 206, 1);

/// The invocations of the macros in `core/src/ops` that implement the operators for the integer
/// types, where the checks of those `#[track_caller]` impls are: `site().location()` of a report
/// from such an impl that was not inlined (its `location()` is the caller's).
///
/// Hand-checked against Rust 1.96's `library/core`; `report.rs` expects them at opt-level 0,
/// where the impls are not inlined. `-Coverflow-checks=on` cannot show them: its panics there
/// are at the caller.
pub const CORE_OPS_ADD: Site = Site::core("library/core/src/ops/arith.rs", 113, 1);
pub const CORE_OPS_SUB: Site = Site::core("library/core/src/ops/arith.rs", 225, 1);
pub const CORE_OPS_MUL: Site = Site::core("library/core/src/ops/arith.rs", 359, 1);
pub const CORE_OPS_NEG: Site = Site::core("library/core/src/ops/arith.rs", 728, 1);
pub const CORE_OPS_ADD_ASSIGN: Site = Site::core("library/core/src/ops/arith.rs", 799, 1);
pub const CORE_OPS_SHL: Site = Site::core("library/core/src/ops/bit.rs", 518, 1);
pub const CORE_OPS_SHR: Site = Site::core("library/core/src/ops/bit.rs", 641, 1);
pub const CORE_OPS_SHL_ASSIGN: Site = Site::core("library/core/src/ops/bit.rs", 994, 1);

/// A panic caught by [`catch`]: its message and location.
#[derive(Debug)]
pub struct Caught {
    /// The payload if it is a `&str` or `String`.
    pub message: Option<String>,
    /// The location the panic hook saw.
    pub location: Option<(String, u32, u32)>,
}

impl fmt::Display for Caught {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.message {
            Some(message) => write!(f, "`{message}`")?,
            None => f.write_str("a payload that is not a string")?,
        }
        match &self.location {
            Some((file, line, col)) => write!(f, " at {file}:{line}:{col}"),
            None => f.write_str(" at no location"),
        }
    }
}

static CATCHING: AtomicBool = AtomicBool::new(false);
static LAST_PANIC: Mutex<Option<(String, u32, u32)>> = Mutex::new(None);

/// Installs a panic hook that records the location of panics inside [`catch`] silently and
/// reports any other panic as the default hook does.
pub fn install_panic_hook() {
    let default = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if CATCHING.load(Ordering::SeqCst) {
            let location = info
                .location()
                .map(|l| (l.file().to_string(), l.line(), l.column()));
            *LAST_PANIC.lock().unwrap_or_else(PoisonError::into_inner) = location;
        } else {
            default(info);
        }
    }));
}

/// Runs `f`, returning its panic's message and location if it panics.
pub fn catch<R>(f: impl FnOnce() -> R + UnwindSafe) -> Result<R, Caught> {
    *LAST_PANIC.lock().unwrap_or_else(PoisonError::into_inner) = None;
    CATCHING.store(true, Ordering::SeqCst);
    let result = panic::catch_unwind(f);
    CATCHING.store(false, Ordering::SeqCst);
    result.map_err(|payload| Caught {
        message: payload_text(&*payload),
        location: LAST_PANIC
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take(),
    })
}

fn payload_text(payload: &(dyn Any + Send)) -> Option<String> {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        Some(s.to_string())
    } else {
        payload.downcast_ref::<String>().cloned()
    }
}
