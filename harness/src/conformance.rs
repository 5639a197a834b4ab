//! `conformance`: the compiler conformance programs in `conformance/`, run with the toolchain.
//!
//! The x86_64 programs are compiled by the patched rustc at several opt-levels and run; each
//! prints `PASS name` or `FAIL name: why` for every check and `N passed, N failed` last, which
//! is parsed here. The aarch64 check builds `core` for `aarch64-unknown-none` in report mode,
//! as the kernel does for arm64, compiles `conformance/aarch64_no_std.rs` against it and checks
//! the overflow paths in its disassembly.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::ctx::Ctx;
use crate::kernel;
use crate::run::{capture, run_logged, spawn_logged};

/// Pass and fail counts of one conformance run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
}

impl std::ops::AddAssign for Summary {
    fn add_assign(&mut self, other: Summary) {
        self.passed += other.passed;
        self.failed += other.failed;
    }
}

const COMPILE_TIMEOUT: Duration = Duration::from_secs(10 * 60);
const RUN_TIMEOUT: Duration = Duration::from_secs(5 * 60);
const OBJDUMP: &str = "/usr/lib/llvm-22/bin/llvm-objdump";
const AARCH64_TARGET: &str = "aarch64-unknown-none";

/// An x86_64 program in `conformance/` and the `-Coverflow-checks` values it runs with.
struct Program {
    file: &'static str,
    modes: &'static [&'static str],
}

const PROGRAMS: &[Program] = &[
    Program {
        file: "report.rs",
        modes: &["report"],
    },
    // `on` is the reference: it checks that the sites `report.rs` expects in `core` are where
    // today's overflow panics point.
    Program {
        file: "default_panics.rs",
        modes: &["report", "on"],
    },
];

/// Every program runs in each of these optimization variants.
const OPT_VARIANTS: &[(&str, &[&str])] = &[
    ("O0", &["-Copt-level=0"]),
    ("O2", &["-Copt-level=2"]),
    ("O3", &["-Copt-level=3"]),
    ("O3-lto", &["-Copt-level=3", "-Clto=fat"]),
];

/// The functions of `conformance/aarch64_no_std.rs` and the `OverflowOp` each must report.
const AARCH64_FUNCTIONS: &[(&str, Op)] = &[
    ("add", Op::Add),
    ("sub_i64", Op::Sub),
    ("mul_u16", Op::Mul),
    ("neg_i32", Op::Neg),
    ("shl_u64", Op::Shl),
    ("shr_i8", Op::Shr),
    ("add_assign", Op::Add),
    ("abs_i32", Op::Neg),
    ("sum_u32", Op::Add),
];

/// An overflowing operation, which `-Coverflow-checks=report` reports through its own entry
/// point in `core::panicking::report_const`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Neg,
    Shl,
    Shr,
}

impl Op {
    /// The name of the function that reports this operation's overflow.
    fn report_function(self) -> &'static str {
        match self {
            Op::Add => "report_const_add_overflow",
            Op::Sub => "report_const_sub_overflow",
            Op::Mul => "report_const_mul_overflow",
            Op::Neg => "report_const_neg_overflow",
            Op::Shl => "report_const_shl_overflow",
            Op::Shr => "report_const_shr_overflow",
        }
    }
}

/// The outcome of one variant: its counts and the reasons of its failures.
#[derive(Debug, Default, PartialEq, Eq)]
struct Outcome {
    summary: Summary,
    failures: Vec<String>,
}

/// Compiles and runs the conformance programs and the aarch64 check; sums their counts.
///
/// A variant that cannot be compiled or run counts as one failure, with the error printed;
/// a missing toolchain is an error.
pub fn run(ctx: &Ctx) -> Result<Summary> {
    let toolchain = kernel::current_toolchain(ctx)?;
    let rustc = toolchain.join("bin/rustc");
    let src = ctx.repo.join("conformance");
    let out = ctx.work.join("conformance");
    fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;

    let mut rows = Vec::new();
    for program in PROGRAMS {
        for &mode in program.modes {
            for &(opt, flags) in OPT_VARIANTS {
                let variant = Variant {
                    name: format!("{}-{mode}-{opt}", program.file.trim_end_matches(".rs")),
                    source: src.join(program.file),
                    mode,
                    flags,
                };
                let result = run_program(ctx, &rustc, &variant, &out);
                rows.push((format!("{} {mode} {opt}", program.file), result));
            }
        }
    }
    let result = aarch64(ctx, &rustc, &toolchain, &src, &out.join("aarch64"));
    rows.push((format!("aarch64_no_std.rs report {AARCH64_TARGET}"), result));

    let mut total = Summary::default();
    eprintln!("conformance:");
    for (name, result) in &rows {
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(err) => {
                eprintln!("  {name:<45} ERROR: {err:#}");
                total.failed += 1;
                continue;
            }
        };
        let Summary { passed, failed } = outcome.summary;
        eprintln!("  {name:<45} {passed:>4} passed {failed:>3} failed");
        for failure in &outcome.failures {
            eprintln!("    FAIL {failure}");
        }
        total += outcome.summary;
    }
    println!(
        "conformance: {} passed, {} failed",
        total.passed, total.failed
    );
    Ok(total)
}

/// A rustc command for the patched toolchain, which needs `RUSTC_BOOTSTRAP` for report mode.
fn rustc_cmd(rustc: &Path) -> Command {
    let mut cmd = Command::new(rustc);
    cmd.env("RUSTC_BOOTSTRAP", "1").arg("--edition=2024");
    cmd
}

/// One program compiled with one `-Coverflow-checks` mode and opt-level.
struct Variant {
    /// `report-report-O0` and so on: the name of the executable and of its logs.
    name: String,
    source: PathBuf,
    mode: &'static str,
    flags: &'static [&'static str],
}

/// Compiles and runs one variant into `out`; its outcome is what the program printed.
fn run_program(ctx: &Ctx, rustc: &Path, variant: &Variant, out: &Path) -> Result<Outcome> {
    let name = &variant.name;
    let exe = out.join(name);
    let _ = fs::remove_file(&exe);
    let build_log = ctx.log(&format!("conformance-{name}-build"))?;
    let mut cmd = rustc_cmd(rustc);
    cmd.args(variant.flags)
        .arg(format!("-Coverflow-checks={}", variant.mode))
        .arg("-o")
        .arg(&exe)
        .arg(&variant.source);
    run_logged(cmd, &format!("compile {name}"), &build_log, COMPILE_TIMEOUT)?;

    let log = ctx.log(&format!("conformance-{name}"))?;
    let status = spawn_logged(
        &mut Command::new(&exe),
        &format!("run {name}"),
        &log,
        RUN_TIMEOUT,
    )?;
    let text = fs::read_to_string(&log).with_context(|| format!("reading {}", log.display()))?;
    let outcome = parse_output(&text).with_context(|| {
        format!(
            "{name} exited with {status}; its output is not complete; see {}",
            log.display()
        )
    })?;
    if status.success() != (outcome.summary.failed == 0) {
        bail!(
            "{name} exited with {status} after {} passed, {} failed; see {}",
            outcome.summary.passed,
            outcome.summary.failed,
            log.display()
        );
    }
    Ok(outcome)
}

/// Why a program's output cannot be counted.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum OutputError {
    #[error("no final `N passed, N failed` line (did the program crash?)")]
    NoSummary,
    #[error(
        "the final line says {claimed:?}, but the output has {counted:?} in PASS and FAIL lines"
    )]
    Mismatch { claimed: Summary, counted: Summary },
}

/// Parses `PASS name`, `FAIL name: why` and the final `N passed, N failed` line of a program's
/// output; other lines (the logged command, a panic message) are ignored.
fn parse_output(text: &str) -> Result<Outcome, OutputError> {
    let mut counted = Outcome::default();
    let mut claimed = None;
    for line in text.lines() {
        if line.starts_with("PASS ") {
            counted.summary.passed += 1;
        } else if let Some(failure) = line.strip_prefix("FAIL ") {
            counted.summary.failed += 1;
            counted.failures.push(failure.to_string());
        } else if let Some(summary) = parse_summary(line) {
            claimed = Some(summary);
        }
    }
    let claimed = claimed.ok_or(OutputError::NoSummary)?;
    if claimed != counted.summary {
        return Err(OutputError::Mismatch {
            claimed,
            counted: counted.summary,
        });
    }
    Ok(counted)
}

/// `N passed, N failed`.
fn parse_summary(line: &str) -> Option<Summary> {
    let (passed, failed) = line.trim().split_once(" passed, ")?;
    let failed = failed.strip_suffix(" failed")?;
    Some(Summary {
        passed: passed.parse().ok()?,
        failed: failed.parse().ok()?,
    })
}

/// Builds `core`, an empty `compiler_builtins` and `aarch64_no_std.rs` for
/// `aarch64-unknown-none` in report mode, and checks the disassembly of each function.
fn aarch64(ctx: &Ctx, rustc: &Path, toolchain: &Path, src: &Path, out: &Path) -> Result<Outcome> {
    let core_src = toolchain.join("lib/rustlib/src/rust/library/core/src/lib.rs");
    if !core_src.exists() {
        bail!(
            "{} is missing: the toolchain has no library source; run `toolchain` again",
            core_src.display()
        );
    }
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let log = ctx.log("conformance-aarch64")?;
    let rlib = |name: &str| out.join(format!("lib{name}.rlib"));
    // Like the kernel's flags for arm64: `--sysroot=/dev/null` so that nothing comes from the
    // toolchain's sysroot, which has no `aarch64-unknown-none` libraries anyway.
    let cross = |crate_type: &str, name: &str| {
        let mut cmd = rustc_cmd(rustc);
        cmd.args(["--target", AARCH64_TARGET, "--sysroot=/dev/null"])
            .args(["--crate-type", crate_type, "--crate-name", name])
            .args(["-Copt-level=2", "-Coverflow-checks=report"]);
        cmd
    };

    let mut cmd = cross("rlib", "core");
    cmd.arg("-o").arg(rlib("core")).arg(&core_src);
    run_logged(cmd, "compile core for aarch64", &log, COMPILE_TIMEOUT)?;

    let extern_core = format!("core={}", rlib("core").display());
    let mut cmd = cross("rlib", "compiler_builtins");
    cmd.args(["--extern", &extern_core])
        .arg("-o")
        .arg(rlib("compiler_builtins"))
        .arg(src.join("aarch64_compiler_builtins.rs"));
    run_logged(cmd, "compile compiler_builtins", &log, COMPILE_TIMEOUT)?;

    let object = out.join("aarch64_no_std.o");
    let _ = fs::remove_file(&object);
    let mut cmd = cross("rlib", "aarch64_no_std");
    cmd.args(["--extern", &extern_core])
        .arg("--extern")
        .arg(format!(
            "compiler_builtins={}",
            rlib("compiler_builtins").display()
        ))
        .arg("-Ccodegen-units=1")
        .arg(format!("--emit=obj={}", object.display()))
        .arg(src.join("aarch64_no_std.rs"));
    run_logged(cmd, "compile aarch64_no_std.rs", &log, COMPILE_TIMEOUT)?;

    let mut cmd = Command::new(OBJDUMP);
    cmd.args(["-dr", "--no-show-raw-insn"]).arg(&object);
    let disassembly = capture(cmd, Duration::from_secs(60))
        .with_context(|| format!("disassembling {}", object.display()))?;
    let listing = out.join("aarch64_no_std.objdump");
    fs::write(&listing, &disassembly).with_context(|| format!("writing {}", listing.display()))?;
    let functions = parse_objdump(&disassembly)
        .with_context(|| format!("reading the disassembly in {}", listing.display()))?;
    Ok(check_aarch64(&functions, &listing))
}

/// One check per expected function, and one that there are no others.
fn check_aarch64(functions: &[Function], listing: &Path) -> Outcome {
    let mut outcome = Outcome::default();
    let mut record = |name: &str, result: Result<(), String>| match result {
        Ok(()) => outcome.summary.passed += 1,
        Err(why) => {
            outcome.summary.failed += 1;
            outcome
                .failures
                .push(format!("{name}: {why} (see {})", listing.display()));
        }
    };
    for &(name, op) in AARCH64_FUNCTIONS {
        let result = match functions.iter().find(|f| f.name == name) {
            Some(function) => check_function(function, op),
            None => Err("not in the object file".to_string()),
        };
        record(name, result);
    }
    let unexpected: Vec<&str> = functions
        .iter()
        .map(|f| f.name.as_str())
        .filter(|name| AARCH64_FUNCTIONS.iter().all(|(n, _)| n != name))
        .collect();
    let result = if unexpected.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "functions missing from AARCH64_FUNCTIONS: {unexpected:?}"
        ))
    };
    record("no_other_functions", result);
    outcome
}

/// One disassembled instruction, with the symbol of its relocation if it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Insn {
    addr: u64,
    mnemonic: String,
    operands: String,
    reloc: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Function {
    name: String,
    insns: Vec<Insn>,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ObjdumpError {
    #[error("line {0}: an instruction outside any function: {1}")]
    OutsideFunction(usize, String),
    #[error("line {0}: a relocation that follows no instruction at its address: {1}")]
    StrayRelocation(usize, String),
    #[error("no functions in the disassembly")]
    Empty,
}

/// Parses the output of `llvm-objdump -dr --no-show-raw-insn` for AArch64.
fn parse_objdump(text: &str) -> Result<Vec<Function>, ObjdumpError> {
    let mut functions: Vec<Function> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim();
        if let Some(header) = trimmed.strip_suffix(">:") {
            // `0000000000000000 <add>:`
            if let Some((_, name)) = header.split_once(" <") {
                functions.push(Function {
                    name: name.to_string(),
                    insns: Vec::new(),
                });
            }
        } else if let Some((addr, rest)) = trimmed.split_once(':') {
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            let mut fields = rest.split_whitespace();
            let Some(mnemonic) = fields.next() else {
                continue;
            };
            let function = functions.last_mut();
            if mnemonic.starts_with("R_") {
                // `0000000000000020:  R_AARCH64_CALL26  symbol`
                let insn = function
                    .and_then(|f| f.insns.last_mut())
                    .filter(|insn| insn.addr == addr)
                    .ok_or_else(|| ObjdumpError::StrayRelocation(number, trimmed.into()))?;
                insn.reloc = fields.next().map(str::to_string);
            } else {
                // `14:  mov  w0, #0x3  // =3`
                let function = function
                    .ok_or_else(|| ObjdumpError::OutsideFunction(number, trimmed.into()))?;
                let operands = rest.trim_start().strip_prefix(mnemonic).unwrap_or_default();
                let operands = operands.split("//").next().unwrap_or_default().trim();
                function.insns.push(Insn {
                    addr,
                    mnemonic: mnemonic.to_string(),
                    operands: operands.to_string(),
                    reloc: None,
                });
            }
        }
    }
    if functions.is_empty() {
        return Err(ObjdumpError::Empty);
    }
    Ok(functions)
}

/// What the (mangled) names of the report entry points contain.
const REPORT_SYMBOL: &str = "report_const_";

fn is_report_call(insn: &Insn) -> bool {
    insn.mnemonic == "bl"
        && insn
            .reloc
            .as_deref()
            .is_some_and(|s| s.contains(REPORT_SYMBOL))
}

/// The branch target of a direct branch within the function, e.g. `0xc <add+0xc>`.
fn branch_target(insn: &Insn) -> Option<u64> {
    if insn.reloc.is_some() {
        return None;
    }
    let before = insn.operands.split(" <").next()?;
    let last = before.rsplit([' ', ',']).next()?;
    u64::from_str_radix(last.strip_prefix("0x")?, 16).ok()
}

fn is_conditional_branch(mnemonic: &str) -> bool {
    mnemonic.starts_with("b.") || ["cbz", "cbnz", "tbz", "tbnz"].contains(&mnemonic)
}

/// Checks one function: it calls the report entry point of `op` and no other, references no panic
/// function, has no trap, and can reach a `ret` after every report call.
fn check_function(function: &Function, op: Op) -> Result<(), String> {
    let insns = &function.insns;
    if let Some(insn) = insns.iter().find(|i| {
        i.reloc
            .as_deref()
            .is_some_and(|s| s.contains("panic") && !s.contains(REPORT_SYMBOL))
    }) {
        return Err(format!(
            "references {} at {:#x}",
            insn.reloc.as_deref().unwrap_or_default(),
            insn.addr
        ));
    }
    if let Some(insn) = insns
        .iter()
        .find(|i| ["brk", "udf", "hlt"].contains(&i.mnemonic.as_str()))
    {
        return Err(format!(
            "has a trap `{}` at {:#x}",
            insn.mnemonic, insn.addr
        ));
    }
    let calls: Vec<usize> = (0..insns.len())
        .filter(|&i| is_report_call(&insns[i]))
        .collect();
    if calls.is_empty() {
        return Err(format!("does not call {}", op.report_function()));
    }
    for &call in &calls {
        let addr = insns[call].addr;
        let symbol = insns[call].reloc.as_deref().unwrap_or_default();
        if !symbol.contains(op.report_function()) {
            return Err(format!(
                "the call at {addr:#x} is to {symbol}, want {}",
                op.report_function()
            ));
        }
        if !reaches_ret(insns, call + 1) {
            return Err(format!("no path from the call at {addr:#x} to a `ret`"));
        }
    }
    Ok(())
}

/// Whether some path from `insns[start]` reaches a `ret`, following branches in the function.
fn reaches_ret(insns: &[Insn], start: usize) -> bool {
    let index: HashMap<u64, usize> = insns.iter().enumerate().map(|(i, n)| (n.addr, i)).collect();
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([start]);
    while let Some(i) = queue.pop_front() {
        if i >= insns.len() || !seen.insert(i) {
            continue;
        }
        let insn = &insns[i];
        let target = branch_target(insn).and_then(|addr| index.get(&addr).copied());
        match insn.mnemonic.as_str() {
            "ret" => return true,
            // A tail call (a `b` with a relocation), an indirect branch or a trap ends the path.
            "b" => queue.extend(target),
            "br" | "brk" | "udf" | "hlt" => {}
            m if is_conditional_branch(m) => {
                queue.extend(target);
                queue.push_back(i + 1);
            }
            _ => queue.push_back(i + 1),
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_counts_and_failures() {
        let text = "\
$ /var/tmp/overflow-harness/conformance/report-report-O0
PASS add_i8
FAIL sub_i8: got 1, want 2
PASS mul_i8
2 passed, 1 failed
";
        let outcome = parse_output(text).unwrap();
        assert_eq!(
            outcome.summary,
            Summary {
                passed: 2,
                failed: 1
            }
        );
        assert_eq!(outcome.failures, ["sub_i8: got 1, want 2"]);
    }

    #[test]
    fn a_crash_before_the_summary_is_an_error() {
        let text = "PASS a\nthread 'main' panicked at report.rs:1:1:\nboom\n";
        assert_eq!(parse_output(text), Err(OutputError::NoSummary));
    }

    #[test]
    fn a_summary_that_disagrees_with_the_lines_is_an_error() {
        let text = "PASS a\nPASS b\n3 passed, 0 failed\n";
        assert_eq!(
            parse_output(text),
            Err(OutputError::Mismatch {
                claimed: Summary {
                    passed: 3,
                    failed: 0
                },
                counted: Summary {
                    passed: 2,
                    failed: 0
                },
            })
        );
    }

    #[test]
    fn summary_line() {
        assert_eq!(
            parse_summary("312 passed, 0 failed"),
            Some(Summary {
                passed: 312,
                failed: 0
            })
        );
        assert_eq!(parse_summary("312 passed"), None);
        assert_eq!(parse_summary("x passed, 0 failed"), None);
    }

    /// The real disassembly of `aarch64_no_std.rs` by the patched toolchain.
    const FIXTURE: &str = include_str!("../../conformance/fixtures/aarch64_no_std.objdump");

    #[test]
    fn the_saved_real_disassembly_passes() {
        let functions = parse_objdump(FIXTURE).unwrap();
        let outcome = check_aarch64(&functions, Path::new("fixture"));
        assert_eq!(outcome.failures, Vec::<String>::new());
        assert_eq!(outcome.summary.passed, AARCH64_FUNCTIONS.len() + 1);
        let add = functions.iter().find(|f| f.name == "add").unwrap();
        let call = add.insns.iter().find(|i| is_report_call(i)).unwrap();
        assert!(call
            .reloc
            .as_deref()
            .unwrap()
            .contains("report_const_add_overflow"));
    }

    const ADD: &str = "
aarch64_no_std.o:\tfile format elf64-littleaarch64

Disassembly of section .text.add:

0000000000000000 <add>:
       0:      \tadds\tw0, w1, w0
       4:      \tb.hs\t0xc <add+0xc>
       8:      \tret
       c:      \tstp\tx30, x19, [sp, #-0x10]!
      10:      \tadrp\tx1, 0x0 <add>
\t\t0000000000000010:  R_AARCH64_ADR_PREL_PG_HI21\t.rodata..Lanon.1
      14:      \tadd\tx1, x1, #0x0
\t\t0000000000000014:  R_AARCH64_ADD_ABS_LO12_NC\t.rodata..Lanon.1
      18:      \tmov\tw19, w0
      1c:      \tmov\tx0, x1
      20:      \tbl\t0x20 <add+0x20>
\t\t0000000000000020:  R_AARCH64_CALL26\t_RNvNtNtCs55EyLgL6L9L_4core9panicking12report_const25report_const_mul_overflow
      24:      \tmov\tw0, w19
      28:      \tldp\tx30, x19, [sp], #0x10
      2c:      \tret
";

    fn add() -> Function {
        let mut functions = parse_objdump(ADD).unwrap();
        assert_eq!(functions.len(), 1);
        functions.pop().unwrap()
    }

    #[test]
    fn parses_instructions_and_relocations() {
        let f = add();
        assert_eq!(f.name, "add");
        assert_eq!(f.insns.len(), 12);
        assert_eq!(
            f.insns[1],
            Insn {
                addr: 4,
                mnemonic: "b.hs".into(),
                operands: "0xc <add+0xc>".into(),
                reloc: None
            }
        );
        assert_eq!(f.insns[7].operands, "x0, x1");
        assert!(is_report_call(&f.insns[8]));
        assert_eq!(branch_target(&f.insns[1]), Some(0xc));
        assert_eq!(branch_target(&f.insns[8]), None);
    }

    #[test]
    fn checks_the_operation() {
        let f = add();
        assert_eq!(check_function(&f, Op::Mul), Ok(()));
        let err = check_function(&f, Op::Add).unwrap_err();
        assert!(err.contains("want report_const_add_overflow"), "{err}");
    }

    #[test]
    fn a_panic_or_a_trap_fails() {
        let text = ADD.replace(
            "9panicking12report_const25report_const_mul_overflow",
            "9panicking11panic_const24panic_const_mul_overflow",
        );
        let f = parse_objdump(&text).unwrap().pop().unwrap();
        let err = check_function(&f, Op::Mul).unwrap_err();
        assert!(err.contains("panic_const_mul_overflow"), "{err}");

        let text = ADD.replace("\tmov\tw0, w19", "\tbrk\t#0x1");
        let f = parse_objdump(&text).unwrap().pop().unwrap();
        let err = check_function(&f, Op::Mul).unwrap_err();
        assert!(err.contains("trap"), "{err}");
    }

    #[test]
    fn a_call_that_does_not_return_to_a_ret_fails() {
        // The path after the call loops back onto itself.
        let text = ADD.replace("\tmov\tw0, w19", "\tb\t0x24 <add+0x24>");
        let f = parse_objdump(&text).unwrap().pop().unwrap();
        let err = check_function(&f, Op::Mul).unwrap_err();
        assert!(err.contains("no path from the call at 0x20"), "{err}");
    }

    #[test]
    fn objdump_errors() {
        assert_eq!(parse_objdump("\n"), Err(ObjdumpError::Empty));
        assert_eq!(
            parse_objdump("  0:  ret\n"),
            Err(ObjdumpError::OutsideFunction(1, "0:  ret".into()))
        );
        let text = "0000000000000000 <f>:\n  0:  ret\n  0000000000000004:  R_AARCH64_CALL26  g\n";
        assert!(matches!(
            parse_objdump(text),
            Err(ObjdumpError::StrayRelocation(3, _))
        ));
    }
}
