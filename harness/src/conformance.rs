//! `conformance`: the compiler conformance programs in `conformance/`, run with the toolchain.
//!
//! The x86_64 programs are compiled by the patched rustc at several opt-levels and run; each
//! prints `PASS name` or `FAIL name: why` for every check and `N passed, N failed` last, which
//! is parsed here. The aarch64 check builds `core` for `aarch64-unknown-none` in report mode,
//! as the kernel does for arm64, compiles `conformance/aarch64_no_std.rs` against it and checks
//! the overflow paths in its disassembly, and the site descriptors they pass in its sections.
//! It then links `conformance/aarch64_merged.rs` against that `core` into a static Linux
//! executable and runs it under `qemu-aarch64`, which prints the same lines as the x86_64
//! programs.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::ctx::{overflow_checks_flags, Ctx};
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
const READOBJ: &str = "/usr/lib/llvm-22/bin/llvm-readobj";
const LLD: &str = "/usr/lib/llvm-22/bin/ld.lld";
const QEMU_AARCH64: &str = "qemu-aarch64";
const AARCH64_TARGET: &str = "aarch64-unknown-none";

/// The variants of `aarch64_merged.rs`, by name: its opt-level and cfg, as in `PROGRAMS`.
const AARCH64_MERGED_VARIANTS: &[(&str, &[&str])] = &[
    ("O0", &["-Copt-level=0", MERGE_FLAG]),
    (
        "O2",
        &["-Copt-level=2", MERGE_FLAG, "--cfg", "merged_reports"],
    ),
];

/// An x86_64 program in `conformance/` and the `-Coverflow-checks` values it runs with.
struct Program {
    file: &'static str,
    modes: &'static [&'static str],
    /// More rustc flags for some of the `OPT_VARIANTS`, by the variant's name.
    extra: &'static [(&'static str, &'static [&'static str])],
}

const PROGRAMS: &[Program] = &[
    Program {
        file: "report.rs",
        modes: &["report"],
        extra: &[],
    },
    // `on` is the reference: it checks that the sites `report.rs` expects in `core` are where
    // today's overflow panics point.
    Program {
        file: "default_panics.rs",
        modes: &["report", "on"],
        extra: &[],
    },
    // With `-Zmerge-overflow-reports`, the variants that vectorize loops merge the reports of the
    // loops that qualify, fat LTO included (its link-time pipeline runs the vectorizer);
    // `merged.rs` expects it from the cfg, and reports in place without it, as at O0.
    Program {
        file: "merged.rs",
        modes: &["report"],
        extra: &[
            ("O0", &[MERGE_FLAG]),
            ("O2", MERGED),
            ("O3", MERGED),
            ("O3-lto", MERGED),
        ],
    },
];

/// The rustc flag that asks for merged loop reports (`patches/rust-trap` 2).
const MERGE_FLAG: &str = "-Zmerge-overflow-reports";

const MERGED: &[&str] = &[MERGE_FLAG, "--cfg", "merged_reports"];

impl Program {
    /// The flags of the opt variant named `opt` for this program: the variant's, `base`, and
    /// this program's extra ones for it.
    fn flags(&self, opt: &str, base: &[&'static str]) -> Vec<&'static str> {
        let extra = self.extra.iter().filter(|(name, _)| *name == opt);
        let extra = extra.flat_map(|(_, flags)| flags.iter());
        base.iter().chain(extra).copied().collect()
    }
}

/// Every program runs in each of these optimization variants.
const OPT_VARIANTS: &[(&str, &[&str])] = &[
    ("O0", &["-Copt-level=0"]),
    ("O2", &["-Copt-level=2"]),
    ("O3", &["-Copt-level=3"]),
    ("O3-lto", &["-Copt-level=3", "-Clto=fat"]),
];

/// The functions of `conformance/aarch64_no_std.rs` and what the overflow path of each reports.
const AARCH64_FUNCTIONS: &[Expect] = &[
    Expect::binary("add", Op::Add, Int::U32, Int::U32),
    Expect::binary("sub_i64", Op::Sub, Int::I64, Int::I64),
    Expect::binary("mul_u16", Op::Mul, Int::U16, Int::U16),
    Expect::neg("neg_i32", Int::I32),
    Expect::binary("shl_u64", Op::Shl, Int::U64, Int::U32),
    Expect::binary("shr_i8", Op::Shr, Int::I8, Int::U32),
    Expect::binary("shr_isize_by_u8", Op::Shr, Int::Isize, Int::U8),
    Expect::binary("add_assign", Op::Add, Int::U32, Int::U32).in_place(),
    Expect::binary("add_i128", Op::Add, Int::I128, Int::I128),
    Expect::binary("mul_usize", Op::Mul, Int::Usize, Int::Usize),
    Expect::neg("abs_i32", Int::I32),
    Expect::binary("sum_u32", Op::Add, Int::U32, Int::U32),
];

/// An overflowing operation: `core::panic::OverflowOp`.
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
    /// The byte that the compiler writes into a site descriptor for this operation.
    fn code(self) -> u8 {
        match self {
            Op::Add => 0,
            Op::Sub => 1,
            Op::Mul => 2,
            Op::Neg => 3,
            Op::Shl => 4,
            Op::Shr => 5,
        }
    }
}

/// A primitive integer type: `core::panic::IntegerType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Int {
    I8,
    I16,
    I32,
    I64,
    I128,
    Isize,
    U8,
    U16,
    U32,
    U64,
    U128,
    Usize,
}

impl Int {
    const ALL: [Int; 12] = [
        Int::I8,
        Int::I16,
        Int::I32,
        Int::I64,
        Int::I128,
        Int::Isize,
        Int::U8,
        Int::U16,
        Int::U32,
        Int::U64,
        Int::U128,
        Int::Usize,
    ];

    /// The byte that the compiler writes into a site descriptor for this type: the width's
    /// index, with bit 3 set for unsigned types.
    fn code(self) -> u8 {
        match self {
            Int::I8 => 0,
            Int::I16 => 1,
            Int::I32 => 2,
            Int::I64 => 3,
            Int::I128 => 4,
            Int::Isize => 5,
            Int::U8 => 8,
            Int::U16 => 9,
            Int::U32 => 10,
            Int::U64 => 11,
            Int::U128 => 12,
            Int::Usize => 13,
        }
    }

    fn from_code(code: u8) -> Option<Int> {
        Int::ALL.into_iter().find(|ty| ty.code() == code)
    }

    fn name(self) -> &'static str {
        match self {
            Int::I8 => "i8",
            Int::I16 => "i16",
            Int::I32 => "i32",
            Int::I64 => "i64",
            Int::I128 => "i128",
            Int::Isize => "isize",
            Int::U8 => "u8",
            Int::U16 => "u16",
            Int::U32 => "u32",
            Int::U64 => "u64",
            Int::U128 => "u128",
            Int::Usize => "usize",
        }
    }

    /// How many general-purpose registers an argument of this type takes on AArch64.
    fn registers(self) -> usize {
        match self {
            Int::I128 | Int::U128 => 2,
            _ => 1,
        }
    }
}

/// What the overflow path of one function in `conformance/aarch64_no_std.rs` must do.
#[derive(Debug, Clone, Copy)]
struct Expect {
    function: &'static str,
    op: Op,
    /// The type of the result and of the left operand, which the site descriptor records.
    ty: Int,
    /// The type of the right operand (a shift amount has its own), `None` for a negation.
    rhs: Option<Int>,
    /// Whether the function returns the wrapped result in `x0`, rather than storing it.
    returns: bool,
}

impl Expect {
    const fn binary(function: &'static str, op: Op, ty: Int, rhs: Int) -> Expect {
        Expect {
            function,
            op,
            ty,
            rhs: Some(rhs),
            returns: true,
        }
    }

    const fn neg(function: &'static str, ty: Int) -> Expect {
        Expect {
            function,
            op: Op::Neg,
            ty,
            rhs: None,
            returns: true,
        }
    }

    /// The function stores the result through a pointer and returns nothing.
    const fn in_place(self) -> Expect {
        Expect {
            returns: false,
            ..self
        }
    }

    /// The demangled name of the entry point instance that the overflow path must call, e.g.
    /// `core::panic::overflow::report_overflow::<u64, u32>`. A `+` or `-` passes its wrapped
    /// result and its right-hand operand, of the same type, to `report_wrapped_overflow::<T>`.
    fn entry_point(&self) -> String {
        match (self.op, self.rhs) {
            (Op::Add | Op::Sub, Some(_)) => {
                format!("{REPORT_SYMBOL}wrapped_overflow::<{}>", self.ty.name())
            }
            (_, Some(rhs)) => format!(
                "{REPORT_SYMBOL}overflow::<{}, {}>",
                self.ty.name(),
                rhs.name()
            ),
            (_, None) => format!("{REPORT_SYMBOL}neg_overflow::<{}>", self.ty.name()),
        }
    }

    /// The register of the entry point's last argument, the site: after the operands, each in
    /// one register or, if it has 128 bits, in an even-numbered pair (AAPCS64).
    fn site_register(&self) -> String {
        let mut next = 0;
        for ty in std::iter::once(self.ty).chain(self.rhs) {
            if ty.registers() == 2 {
                next += next % 2;
            }
            next += ty.registers();
        }
        format!("x{next}")
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

    // The x86_64 programs and the aarch64 ones are independent, and each compile runs on one
    // core: two threads keep both cores busy.
    let (mut rows, aarch64_rows) = std::thread::scope(|scope| {
        let aarch64_rows = scope.spawn(|| {
            let out = out.join("aarch64");
            let mut rows = Vec::new();
            let result = aarch64(ctx, &rustc, &toolchain, &src, &out);
            rows.push((format!("aarch64_no_std.rs report {AARCH64_TARGET}"), result));
            for &(opt, flags) in AARCH64_MERGED_VARIANTS {
                let result = aarch64_merged(ctx, &rustc, &src, &out, opt, flags);
                rows.push((
                    format!("aarch64_merged.rs report {opt} {QEMU_AARCH64}"),
                    result,
                ));
            }
            rows
        });
        let mut rows = Vec::new();
        for program in PROGRAMS {
            for &mode in program.modes {
                for &(opt, flags) in OPT_VARIANTS {
                    let variant = Variant {
                        name: format!("{}-{mode}-{opt}", program.file.trim_end_matches(".rs")),
                        source: src.join(program.file),
                        mode,
                        flags: program.flags(opt, flags),
                    };
                    let result = run_program(ctx, &rustc, &variant, &out);
                    rows.push((format!("{} {mode} {opt}", program.file), result));
                }
            }
        }
        (rows, aarch64_rows.join())
    });
    rows.extend(
        aarch64_rows.map_err(|_| anyhow::anyhow!("the aarch64 conformance thread panicked"))?,
    );

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
    flags: Vec<&'static str>,
}

/// Compiles and runs one variant into `out`; its outcome is what the program printed.
fn run_program(ctx: &Ctx, rustc: &Path, variant: &Variant, out: &Path) -> Result<Outcome> {
    let name = &variant.name;
    let exe = out.join(name);
    let _ = fs::remove_file(&exe);
    let build_log = ctx.log(&format!("conformance-{name}-build"))?;
    let mut cmd = rustc_cmd(rustc);
    cmd.args(&variant.flags)
        .args(overflow_checks_flags(variant.mode))
        .arg("-o")
        .arg(&exe)
        .arg(&variant.source);
    run_logged(cmd, &format!("compile {name}"), &build_log, COMPILE_TIMEOUT)?;
    run_counted(ctx, name, Command::new(&exe))
}

/// Runs a compiled program with `cmd`; its outcome is what it printed.
fn run_counted(ctx: &Ctx, name: &str, mut cmd: Command) -> Result<Outcome> {
    let log = ctx.log(&format!("conformance-{name}"))?;
    let status = spawn_logged(&mut cmd, &format!("run {name}"), &log, RUN_TIMEOUT)?;
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
/// `aarch64-unknown-none` in report mode, and checks the disassembly of each function and the
/// site descriptors it uses.
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
    let rlib = |name: &str| rlib(out, name);
    let cross = |crate_type: &str, name: &str| cross(rustc, crate_type, name, &["-Copt-level=2"]);

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

    // The disassembly with relocations, and with the entry points' names demangled, so that
    // they show their type arguments.
    let mut cmd = Command::new(OBJDUMP);
    cmd.args(["-dr", "-C", "--no-show-raw-insn"]).arg(&object);
    let disassembly = capture(cmd, Duration::from_secs(60))
        .with_context(|| format!("disassembling {}", object.display()))?;
    let listing = out.join("aarch64_no_std.objdump");
    fs::write(&listing, &disassembly).with_context(|| format!("writing {}", listing.display()))?;
    // The sections with their flags and contents, their relocations and the symbols: where the
    // site descriptors are and what they contain.
    let mut cmd = Command::new(READOBJ);
    cmd.args(["--elf-output-style=JSON", "--sections", "--section-data"])
        .args(["--relocations", "--symbols"])
        .arg(&object);
    let sections = capture(cmd, Duration::from_secs(60))
        .with_context(|| format!("reading the sections of {}", object.display()))?;
    let sections_file = out.join("aarch64_no_std.readobj.json");
    fs::write(&sections_file, &sections)
        .with_context(|| format!("writing {}", sections_file.display()))?;

    let functions = parse_objdump(&disassembly)
        .with_context(|| format!("reading the disassembly in {}", listing.display()))?;
    let elf = parse_readobj(&sections)
        .with_context(|| format!("reading the sections in {}", sections_file.display()))?;
    Ok(check_aarch64(&Object { functions, elf }, &listing))
}

/// The library `name` that [`aarch64`] builds in `out`.
fn rlib(out: &Path, name: &str) -> PathBuf {
    out.join(format!("lib{name}.rlib"))
}

/// A rustc command for `aarch64-unknown-none` in report mode. Like the kernel's flags for
/// arm64: `--sysroot=/dev/null` so that nothing comes from the toolchain's sysroot, which has
/// no `aarch64-unknown-none` libraries anyway.
fn cross(rustc: &Path, crate_type: &str, name: &str, flags: &[&str]) -> Command {
    let mut cmd = rustc_cmd(rustc);
    cmd.args(["--target", AARCH64_TARGET, "--sysroot=/dev/null"])
        .args(["--crate-type", crate_type, "--crate-name", name])
        .args(flags)
        .args(overflow_checks_flags("report"));
    cmd
}

/// Links `aarch64_merged.rs` with `flags` against the `core` and `compiler_builtins` that
/// [`aarch64`] built in `out`, and runs it under `qemu-aarch64`.
fn aarch64_merged(
    ctx: &Ctx,
    rustc: &Path,
    src: &Path,
    out: &Path,
    opt: &str,
    flags: &[&str],
) -> Result<Outcome> {
    let mut cmd = cross(rustc, "bin", "aarch64_merged", flags);
    for name in ["core", "compiler_builtins"] {
        let rlib = rlib(out, name);
        if !rlib.exists() {
            bail!(
                "{} is missing: building it for aarch64_no_std.rs failed (see above)",
                rlib.display()
            );
        }
        cmd.arg("--extern")
            .arg(format!("{name}={}", rlib.display()));
    }
    let name = format!("aarch64_merged-report-{opt}");
    let exe = out.join(&name);
    let _ = fs::remove_file(&exe);
    // The toolchain has no `rust-lld`, the target's default linker.
    cmd.arg(format!("-Clinker={LLD}"))
        .arg("-o")
        .arg(&exe)
        .arg(src.join("aarch64_merged.rs"));
    let build_log = ctx.log(&format!("conformance-{name}-build"))?;
    run_logged(cmd, &format!("compile {name}"), &build_log, COMPILE_TIMEOUT)?;
    let mut cmd = Command::new(QEMU_AARCH64);
    cmd.arg(&exe);
    run_counted(ctx, &name, cmd).with_context(|| {
        format!(
            "running {name} under {QEMU_AARCH64} (from qemu-user; run `setup` if it is missing)"
        )
    })
}

/// One check per expected function, one that no two functions share a site descriptor, and
/// one that there are no other functions than these and the entry point instances they call.
fn check_aarch64(object: &Object, listing: &Path) -> Outcome {
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
    let mut owners: HashMap<(String, i64), &str> = HashMap::new();
    let mut shared = Vec::new();
    for expect in AARCH64_FUNCTIONS {
        let name = expect.function;
        let result = match object.function(name) {
            Some(function) => check_function(object, function, expect),
            None => Err("not in the object file".to_string()),
        };
        let result = result.map(|sites| {
            for site in sites {
                match owners.get(&site) {
                    Some(owner) if *owner != name => {
                        shared.push(format!("{owner} and {name} use {}+{:#x}", site.0, site.1))
                    }
                    _ => {
                        owners.insert(site, name);
                    }
                }
            }
        });
        record(name, result);
    }
    let result = if shared.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "site descriptors used by two functions: {shared:?}"
        ))
    };
    record("one_site_per_operation", result);
    let unexpected: Vec<&str> = object
        .functions
        .iter()
        .map(|f| f.name.as_str())
        .filter(|name| !name.starts_with(REPORT_SYMBOL))
        .filter(|name| AARCH64_FUNCTIONS.iter().all(|e| e.function != *name))
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

/// A relocation as `llvm-objdump -dr -C` prints it after an instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reloc {
    /// `R_AARCH64_CALL26` and so on.
    kind: String,
    /// A (demangled) symbol, or for a local symbol often its section's name.
    symbol: String,
    addend: i64,
}

/// One disassembled instruction, with its relocation if it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Insn {
    addr: u64,
    mnemonic: String,
    operands: String,
    reloc: Option<Reloc>,
}

impl Insn {
    /// The operands, split at commas, e.g. `["x2", "x2", "#0x0"]`.
    fn operand_list(&self) -> Vec<&str> {
        self.operands.split(',').map(str::trim).collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Function {
    name: String,
    /// The section it is in: each function has its own, `.text.` and its (mangled) name.
    section: String,
    /// Its offset in the section.
    start: u64,
    insns: Vec<Insn>,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ObjdumpError {
    #[error("line {0}: an instruction outside any function: {1}")]
    OutsideFunction(usize, String),
    #[error("line {0}: a relocation that follows no instruction at its address: {1}")]
    StrayRelocation(usize, String),
    #[error("line {0}: a relocation without a symbol: {1}")]
    BadRelocation(usize, String),
    #[error("no functions in the disassembly")]
    Empty,
}

/// `symbol+0x10` or `symbol-0x8` as a symbol and an addend; anything else has addend 0.
fn split_addend(target: &str) -> (&str, i64) {
    let parse = |hex: &str| i64::from_str_radix(hex, 16).ok();
    if let Some((symbol, hex)) = target.rsplit_once("+0x") {
        if let Some(addend) = parse(hex) {
            return (symbol, addend);
        }
    }
    if let Some((symbol, hex)) = target.rsplit_once("-0x") {
        if let Some(addend) = parse(hex) {
            return (symbol, -addend);
        }
    }
    (target, 0)
}

/// Parses the output of `llvm-objdump -dr -C --no-show-raw-insn` for AArch64.
fn parse_objdump(text: &str) -> Result<Vec<Function>, ObjdumpError> {
    let mut functions: Vec<Function> = Vec::new();
    let mut section = String::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim();
        if let Some(name) = trimmed
            .strip_prefix("Disassembly of section ")
            .and_then(|rest| rest.strip_suffix(':'))
        {
            section = name.to_string();
        } else if let Some(header) = trimmed.strip_suffix(">:") {
            // `0000000000000000 <add>:`
            if let Some((start, name)) = header.split_once(" <") {
                functions.push(Function {
                    name: name.to_string(),
                    section: section.clone(),
                    start: u64::from_str_radix(start, 16).unwrap_or_default(),
                    insns: Vec::new(),
                });
            }
        } else if let Some((addr, rest)) = trimmed.split_once(':') {
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            let rest = rest.trim();
            let Some(mnemonic) = rest.split_whitespace().next() else {
                continue;
            };
            let function = functions.last_mut();
            if mnemonic.starts_with("R_") {
                // `0000000000000020:  R_AARCH64_CALL26  core::panic::overflow::report_overflow::<u32, u32>`
                let target = rest[mnemonic.len()..].trim();
                if target.is_empty() {
                    return Err(ObjdumpError::BadRelocation(number, trimmed.into()));
                }
                let insn = function
                    .and_then(|f| f.insns.last_mut())
                    .filter(|insn| insn.addr == addr)
                    .ok_or_else(|| ObjdumpError::StrayRelocation(number, trimmed.into()))?;
                let (symbol, addend) = split_addend(target);
                insn.reloc = Some(Reloc {
                    kind: mnemonic.to_string(),
                    symbol: symbol.to_string(),
                    addend,
                });
            } else {
                // `14:  mov  w0, #0x3  // =3`
                let function = function
                    .ok_or_else(|| ObjdumpError::OutsideFunction(number, trimmed.into()))?;
                let operands = rest[mnemonic.len()..]
                    .split("//")
                    .next()
                    .unwrap_or_default();
                function.insns.push(Insn {
                    addr,
                    mnemonic: mnemonic.to_string(),
                    operands: operands.trim().to_string(),
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

/// The parts of the object file that the check reads, from `llvm-readobj`.
#[derive(Debug, Default)]
struct Elf {
    sections: Vec<Section>,
    relocations: Vec<DataReloc>,
    symbols: Vec<Symbol>,
}

#[derive(Debug)]
struct Section {
    index: u64,
    name: String,
    /// `SHF_*`.
    flags: u64,
    bytes: Vec<u8>,
}

/// A relocation, in the section with index `section`.
#[derive(Debug)]
struct DataReloc {
    section: u64,
    offset: u64,
    kind: String,
    symbol: String,
}

#[derive(Debug)]
struct Symbol {
    name: String,
    value: u64,
    section: String,
}

const SHF_WRITE: u64 = 0x1;
const SHF_EXECINSTR: u64 = 0x4;

impl Elf {
    /// The section and offset of `symbol + addend`: `symbol` is a section's name (the symbol of
    /// a section) or a symbol's.
    fn locate(&self, symbol: &str, addend: i64) -> Option<(&Section, u64)> {
        let (section, base) = match self.sections.iter().find(|s| s.name == symbol) {
            Some(section) => (section, 0),
            None => {
                let symbol = self.symbols.iter().find(|s| s.name == symbol)?;
                let section = self.sections.iter().find(|s| s.name == symbol.section)?;
                (section, symbol.value)
            }
        };
        Some((section, base.checked_add_signed(addend)?))
    }
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadobjError {
    #[error("not the JSON output of `llvm-readobj --elf-output-style=JSON`: {0}")]
    Json(String),
    #[error("the output describes {0} files, want one")]
    Files(usize),
    #[error("relocations in section {0}, which is not listed")]
    UnknownRelocationSection(u64),
}

/// What `parse_readobj` reads of `llvm-readobj`'s JSON.
mod readobj {
    use serde::Deserialize;

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct File {
        pub sections: Vec<SectionEntry>,
        #[serde(default)]
        pub relocations: Vec<RelocationSection>,
        #[serde(default)]
        pub symbols: Vec<SymbolEntry>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct SectionEntry {
        pub section: Section,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct Section {
        pub index: u64,
        pub name: Named,
        pub flags: Flags,
        /// For a relocation section, the section it applies to.
        #[serde(default)]
        pub info: u64,
        pub section_data: Option<Data>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct Named {
        pub name: String,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct Flags {
        pub value: u64,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct Data {
        pub bytes: Vec<u8>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct RelocationSection {
        /// The index of the relocation section itself.
        pub section_index: u64,
        pub relocs: Vec<RelocationEntry>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct RelocationEntry {
        pub relocation: Relocation,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct Relocation {
        pub offset: u64,
        #[serde(rename = "Type")]
        pub kind: Named,
        pub symbol: Named,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct SymbolEntry {
        pub symbol: Symbol,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    pub struct Symbol {
        pub name: Named,
        pub value: u64,
        pub section: Named,
    }
}

/// Parses the output of `llvm-readobj --elf-output-style=JSON --sections --section-data
/// --relocations --symbols` for one object file.
fn parse_readobj(text: &str) -> Result<Elf, ReadobjError> {
    let files: Vec<readobj::File> =
        serde_json::from_str(text).map_err(|e| ReadobjError::Json(e.to_string()))?;
    let [file] =
        <[readobj::File; 1]>::try_from(files).map_err(|files| ReadobjError::Files(files.len()))?;
    let sections: Vec<readobj::Section> = file.sections.into_iter().map(|s| s.section).collect();
    let mut relocations = Vec::new();
    for group in file.relocations {
        let target = sections
            .iter()
            .find(|s| s.index == group.section_index)
            .map(|s| s.info)
            .ok_or(ReadobjError::UnknownRelocationSection(group.section_index))?;
        relocations.extend(group.relocs.into_iter().map(|r| DataReloc {
            section: target,
            offset: r.relocation.offset,
            kind: r.relocation.kind.name,
            symbol: r.relocation.symbol.name,
        }));
    }
    Ok(Elf {
        sections: sections
            .into_iter()
            .map(|s| Section {
                index: s.index,
                name: s.name.name,
                flags: s.flags.value,
                bytes: s.section_data.map(|d| d.bytes).unwrap_or_default(),
            })
            .collect(),
        relocations,
        symbols: file
            .symbols
            .into_iter()
            .map(|s| Symbol {
                name: s.symbol.name.name,
                value: s.symbol.value,
                section: s.symbol.section.name,
            })
            .collect(),
    })
}

/// The object file: its disassembly and its sections.
struct Object {
    functions: Vec<Function>,
    elf: Elf,
}

impl Object {
    /// What a relocation points at: the function at its section and offset for a local
    /// function, whose relocations name its section, else its symbol.
    fn resolve<'a>(&'a self, reloc: &'a Reloc) -> &'a str {
        self.functions
            .iter()
            .find(|f| f.section == reloc.symbol && i64::try_from(f.start) == Ok(reloc.addend))
            .map_or(&reloc.symbol, |f| &f.name)
    }

    /// The function that a `bl` calls, from its relocation or, for a call within its section,
    /// from its operand `0x40 <name>`.
    fn callee<'a>(&'a self, insn: &'a Insn) -> Option<&'a str> {
        if insn.mnemonic != "bl" {
            return None;
        }
        if let Some(reloc) = &insn.reloc {
            return Some(self.resolve(reloc));
        }
        let (_, target) = insn.operands.split_once(" <")?;
        let target = target.strip_suffix('>')?;
        Some(split_addend(target).0)
    }

    /// The function of that (demangled) name.
    fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    fn is_report_call(&self, insn: &Insn) -> bool {
        self.callee(insn)
            .is_some_and(|callee| callee.starts_with(REPORT_SYMBOL))
    }
}

/// What the demangled names of the report entry points (`report_overflow::<T, U>`,
/// `report_wrapped_overflow::<T>`, `report_neg_overflow::<T>` and their `_at` variants) start
/// with.
const REPORT_SYMBOL: &str = "core::panic::overflow::report_";

/// Offsets in `core::panic::OverflowSite` (`#[repr(C)]`, 64-bit): the location at 0, then a
/// reference to the site's flag, the operation and the type.
const SITE_LOCATION: u64 = 0;
const SITE_FLAG: u64 = 8;
const SITE_OP: u64 = 16;
const SITE_TY: u64 = 17;
const SITE_SIZE: u64 = 24;

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

/// Whether the instruction writes its first operand: not a store, compare, branch or call.
fn writes_first_operand(mnemonic: &str) -> bool {
    let reads = [
        "b", "bl", "blr", "br", "ret", "cbz", "cbnz", "tbz", "tbnz", "cmp", "cmn", "tst", "ccmp",
        "ccmn", "fcmp", "prfm", "nop",
    ];
    !(reads.contains(&mnemonic) || mnemonic.starts_with("b.") || mnemonic.starts_with("st"))
}

/// Whether `operand` is the general-purpose register `x<n>` given as `reg`, or its `w<n>`.
fn is_register(operand: &str, reg: &str) -> bool {
    let number = |r: &str| {
        r.strip_prefix('x')
            .or_else(|| r.strip_prefix('w'))
            .map(str::to_string)
    };
    number(operand).is_some_and(|n| Some(n) == number(reg))
}

/// Checks one function: it calls the entry point of its operation and types and no other, with
/// a site descriptor in writable memory that records that operation and type; it references no
/// panic function, has no trap, and after every report call, reaches a `ret` and, if it returns
/// the result, sets `x0` first. Returns the site descriptors, as symbols and addends.
fn check_function(
    object: &Object,
    function: &Function,
    expect: &Expect,
) -> Result<BTreeSet<(String, i64)>, String> {
    let insns = &function.insns;
    for insn in insns {
        let Some(reloc) = &insn.reloc else { continue };
        let target = object.resolve(reloc);
        if target.contains("panic") && !target.starts_with(REPORT_SYMBOL) {
            return Err(format!("references {target} at {:#x}", insn.addr));
        }
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
    let entry_point = expect.entry_point();
    let calls: Vec<usize> = (0..insns.len())
        .filter(|&i| object.is_report_call(&insns[i]))
        .collect();
    if calls.is_empty() {
        return Err(format!("does not call {entry_point}"));
    }
    let mut sites = BTreeSet::new();
    for &call in &calls {
        let addr = insns[call].addr;
        let callee = object.callee(&insns[call]).unwrap_or_default();
        if callee != entry_point {
            return Err(format!(
                "the call at {addr:#x} is to {callee}, want {entry_point}"
            ));
        }
        let (symbol, addend) = site_argument(object, insns, call, expect)
            .or_else(|why| {
                site_in_callee(object, callee, expect).map_err(|more| format!("{why}, and {more}"))
            })
            .map_err(|why| format!("the site of the call at {addr:#x}: {why}"))?;
        check_site(&object.elf, &symbol, addend, expect)
            .map_err(|why| format!("the site of the call at {addr:#x}, {symbol}: {why}"))?;
        sites.insert((symbol, addend));
        returns_after(insns, call, expect.returns)?;
    }
    Ok(sites)
}

/// The site that the call at `insns[call]` passes: in its register after the operands or, as each
/// crate's instances are internal and LLVM drops the arguments that are the same constant at
/// every call (the operand of a negation is always `MIN`), in a register before it that holds a
/// site descriptor of this operation and type and through which the instance called reads the
/// site's location.
fn site_argument(
    object: &Object,
    insns: &[Insn],
    call: usize,
    expect: &Expect,
) -> Result<(String, i64), String> {
    let register = expect.site_register();
    let why = match loaded_address(insns, call, &register) {
        Ok(site) => return Ok(site),
        Err(why) => why,
    };
    let callee = object.callee(&insns[call]).unwrap_or_default();
    let Some(instance) = object.function(callee) else {
        return Err(why);
    };
    let number: usize = register[1..].parse().unwrap_or(0);
    (0..number)
        .map(|n| format!("x{n}"))
        .filter(|register| {
            let location = if SITE_LOCATION == 0 {
                format!("[{register}]")
            } else {
                format!("[{register}, #{SITE_LOCATION:#x}]")
            };
            instance
                .insns
                .iter()
                .any(|i| i.mnemonic.starts_with("ldr") && i.operands.contains(&location))
        })
        .filter_map(|register| loaded_address(insns, call, &register).ok())
        .find(|(symbol, addend)| check_site(&object.elf, symbol, *addend, expect).is_ok())
        .ok_or(why)
}

/// The site that the entry point instance `callee` puts in the report itself. Each crate has its
/// own, internal instances, so LLVM specializes an instance that only one call uses for that
/// call's constant arguments: the site is then an address that the instance loads, no longer an
/// argument. Only an instance with a single call can do so.
fn site_in_callee(object: &Object, callee: &str, expect: &Expect) -> Result<(String, i64), String> {
    let calls = object
        .functions
        .iter()
        .flat_map(|f| &f.insns)
        .filter(|insn| object.callee(insn) == Some(callee))
        .count();
    if calls != 1 {
        return Err(format!("{callee} is called {calls} times"));
    }
    let function = object
        .function(callee)
        .ok_or_else(|| format!("{callee} is not in the object file"))?;
    let insns = &function.insns;
    let mut sites = BTreeSet::new();
    for (i, insn) in insns.iter().enumerate() {
        let low12 = insn
            .reloc
            .as_ref()
            .is_some_and(|r| r.kind == "R_AARCH64_ADD_ABS_LO12_NC");
        if insn.mnemonic != "add" || !low12 {
            continue;
        }
        let register = insn.operand_list()[0].to_string();
        if let Ok((symbol, addend)) = loaded_address(insns, i + 1, &register) {
            if check_site(&object.elf, &symbol, addend, expect).is_ok() {
                sites.insert((symbol, addend));
            }
        }
    }
    match sites.len() {
        1 => Ok(sites.pop_first().unwrap()),
        n => Err(format!(
            "{callee}, called once, loads {n} site descriptors of this operation"
        )),
    }
}

/// Follows `register` back from the call at `insns[call]`, within its block, to the `adrp` and
/// `add` that put an address in it (through `mov`s): the symbol and addend of that address.
fn loaded_address(insns: &[Insn], call: usize, register: &str) -> Result<(String, i64), String> {
    let mut register = register.to_string();
    // The symbol and addend of the `add`, and the register whose page it adds to.
    let mut low: Option<(Reloc, String)> = None;
    for insn in insns[..call].iter().rev() {
        let ops = insn.operand_list();
        let shown = || format!("`{} {}` at {:#x}", insn.mnemonic, insn.operands, insn.addr);
        let reloc = insn.reloc.as_ref();
        if insn.mnemonic == "ret" || insn.mnemonic == "b" || insn.mnemonic == "br" {
            break;
        }
        if !writes_first_operand(&insn.mnemonic) || !is_register(ops[0], &register) {
            continue;
        }
        match (&low, insn.mnemonic.as_str()) {
            (None, "mov") if ops.len() == 2 && ops[1].starts_with('x') => {
                register = ops[1].to_string();
            }
            (None, "add") => {
                let Some(reloc) = reloc.filter(|r| r.kind == "R_AARCH64_ADD_ABS_LO12_NC") else {
                    return Err(format!("{register} is set by {}, not to a symbol", shown()));
                };
                register = ops.get(1).unwrap_or(&"").to_string();
                low = Some((reloc.clone(), register.clone()));
            }
            (Some((low, _)), "adrp") => {
                let page = reloc.filter(|r| r.kind == "R_AARCH64_ADR_PREL_PG_HI21");
                return match page {
                    Some(page) if page.symbol == low.symbol && page.addend == low.addend => {
                        Ok((low.symbol.clone(), low.addend))
                    }
                    _ => Err(format!(
                        "{} is not the page of {}+{:#x}",
                        shown(),
                        low.symbol,
                        low.addend
                    )),
                };
            }
            _ => {
                return Err(format!(
                    "{register} is set by {}, not to an address",
                    shown()
                ))
            }
        }
    }
    Err(match low {
        Some((low, register)) => format!(
            "no `adrp {register}` to {}+{:#x} before the call",
            low.symbol, low.addend
        ),
        None => format!("{register} is not set before the call"),
    })
}

/// Checks the site descriptor at `symbol + addend`: in a read-only data section, with a
/// relocation for its location, one for its flag in a writable data section, and the operation
/// and type of `expect`.
fn check_site(elf: &Elf, symbol: &str, addend: i64, expect: &Expect) -> Result<(), String> {
    let (section, offset) = elf
        .locate(symbol, addend)
        .ok_or("not a section or symbol of the object file")?;
    let name = &section.name;
    if section.flags & (SHF_WRITE | SHF_EXECINSTR) != 0 {
        return Err(format!(
            "in section {name} (flags {:#x}), which is not read-only data",
            section.flags
        ));
    }
    let bytes = usize::try_from(offset)
        .ok()
        .and_then(|start| section.bytes.get(start..start + SITE_SIZE as usize))
        .ok_or(format!(
            "{name} has no {SITE_SIZE} bytes at {offset:#x} (it has {})",
            section.bytes.len()
        ))?;
    let flag = elf
        .relocations
        .iter()
        .find(|r| r.section == section.index && r.offset == offset + SITE_FLAG);
    match flag.and_then(|r| elf.locate(&r.symbol, 0)) {
        Some((data, _)) if data.flags & SHF_WRITE != 0 && data.flags & SHF_EXECINSTR == 0 => {}
        _ => {
            return Err(format!(
                "the flag is not a relocation to writable data but {flag:?}"
            ))
        }
    }
    let location = elf
        .relocations
        .iter()
        .find(|r| r.section == section.index && r.offset == offset + SITE_LOCATION);
    match location {
        Some(r) if r.kind == "R_AARCH64_ABS64" && elf.locate(&r.symbol, 0).is_some() => {}
        _ => {
            return Err(format!(
                "the location is not an `R_AARCH64_ABS64` relocation to this object but \
                 {location:?}"
            ))
        }
    }
    let (op, ty) = (bytes[SITE_OP as usize], bytes[SITE_TY as usize]);
    if op != expect.op.code() {
        return Err(format!(
            "the operation is {op}, want {} ({:?})",
            expect.op.code(),
            expect.op
        ));
    }
    if ty != expect.ty.code() {
        let got = Int::from_code(ty).map_or("not a type", Int::name);
        return Err(format!(
            "the type is {ty} ({got}), want {} ({})",
            expect.ty.code(),
            expect.ty.name()
        ));
    }
    Ok(())
}

/// Checks the paths from the report call at `insns[call]`: at least one reaches a `ret`, and if
/// `returns`, none gets there without setting `x0` (the call clobbers it) after the last call.
fn returns_after(insns: &[Insn], call: usize, returns: bool) -> Result<(), String> {
    let index: HashMap<u64, usize> = insns.iter().enumerate().map(|(i, n)| (n.addr, i)).collect();
    let call_addr = insns[call].addr;
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([(call + 1, false)]);
    let mut reached = false;
    while let Some((i, set)) = queue.pop_front() {
        if i >= insns.len() || !seen.insert((i, set)) {
            continue;
        }
        let insn = &insns[i];
        let set = match insn.mnemonic.as_str() {
            "bl" | "blr" => false,
            m if writes_first_operand(m) => set || is_register(insn.operand_list()[0], "x0"),
            _ => set,
        };
        let target = branch_target(insn).and_then(|addr| index.get(&addr).copied());
        match insn.mnemonic.as_str() {
            "ret" if returns && !set => {
                return Err(format!(
                    "a path from the call at {call_addr:#x} returns at {:#x} without setting x0",
                    insn.addr
                ));
            }
            "ret" => reached = true,
            // A tail call (a `b` with a relocation), an indirect branch or a trap ends the path.
            "b" => queue.extend(target.map(|t| (t, set))),
            "br" | "brk" | "udf" | "hlt" => {}
            m if is_conditional_branch(m) => {
                queue.extend(target.map(|t| (t, set)));
                queue.push_back((i + 1, set));
            }
            _ => queue.push_back((i + 1, set)),
        }
    }
    if reached {
        Ok(())
    } else {
        Err(format!(
            "no path from the call at {call_addr:#x} to a `ret`"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_flags_name_existing_variants() {
        for program in PROGRAMS {
            for (opt, _) in program.extra {
                assert!(
                    OPT_VARIANTS.iter().any(|(name, _)| name == opt),
                    "{}: no opt variant {opt}",
                    program.file
                );
            }
        }
        let merged = PROGRAMS.iter().find(|p| p.file == "merged.rs").unwrap();
        assert_eq!(
            merged.flags("O0", &["-Copt-level=0"]),
            ["-Copt-level=0", "-Zmerge-overflow-reports"]
        );
        assert_eq!(
            merged.flags("O3-lto", &["-Copt-level=3", "-Clto=fat"]),
            [
                "-Copt-level=3",
                "-Clto=fat",
                "-Zmerge-overflow-reports",
                "--cfg",
                "merged_reports"
            ]
        );
    }

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

    /// The real disassembly of `aarch64_no_std.rs` by the patched toolchain, and its sections.
    const FIXTURE: &str = include_str!("../../conformance/fixtures/aarch64_no_std.objdump");
    const FIXTURE_SECTIONS: &str =
        include_str!("../../conformance/fixtures/aarch64_no_std.readobj.json");

    #[test]
    fn the_saved_real_object_passes() {
        let object = Object {
            functions: parse_objdump(FIXTURE).unwrap(),
            elf: parse_readobj(FIXTURE_SECTIONS).unwrap(),
        };
        let outcome = check_aarch64(&object, Path::new("fixture"));
        assert_eq!(outcome.failures, Vec::<String>::new());
        assert_eq!(outcome.summary.passed, AARCH64_FUNCTIONS.len() + 2);
        let add = object.functions.iter().find(|f| f.name == "add").unwrap();
        let call = add.insns.iter().find(|i| object.is_report_call(i)).unwrap();
        assert_eq!(
            object.callee(call),
            Some("core::panic::overflow::report_wrapped_overflow::<u32>")
        );
    }

    const ADD: &str = "
aarch64_no_std.o:\tfile format elf64-littleaarch64

Disassembly of section .text.add:

0000000000000000 <add>:
       0:      \tadds\tw9, w0, w1
       4:      \tb.hs\t0x10 <add+0x10>
       8:      \tmov\tw0, w9
       c:      \tret
      10:      \tstr\tx30, [sp, #-0x10]!
      14:      \tadrp\tx2, 0x0 <add>
\t\t0000000000000014:  R_AARCH64_ADR_PREL_PG_HI21\t.rodata..Lanon.2
      18:      \tadd\tx2, x2, #0x0
\t\t0000000000000018:  R_AARCH64_ADD_ABS_LO12_NC\t.rodata..Lanon.2
      1c:      \tbl\t0x1c <add+0x1c>
\t\t000000000000001c:  R_AARCH64_CALL26\t.text._RINvNtNtCs55EyLgL6L9L_4core5panic8overflow23report_wrapped_overflowmECs1_14aarch64_no_std
      20:      \tmov\tw0, w9
      24:      \tldr\tx30, [sp], #0x10
      28:      \tret

Disassembly of section .text._RINvNtNtCs55EyLgL6L9L_4core5panic8overflow23report_wrapped_overflowmECs1_14aarch64_no_std:

0000000000000000 <core::panic::overflow::report_wrapped_overflow::<u32>>:
       0:      \tret
";

    /// The sections of `ADD`: its site descriptor, read-only, records its location, a flag in
    /// writable data, and `Add` on `u32`.
    const ADD_SECTIONS: &str = r#"[{
  "Sections": [
    {"Section": {"Index": 5, "Name": {"Name": ".rodata..Lanon.2"}, "Flags": {"Value": 2},
      "SectionData": {"Bytes": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                0, 10, 0, 0, 0, 0, 0, 0]}}},
    {"Section": {"Index": 6, "Name": {"Name": ".rela.rodata..Lanon.2"},
      "Flags": {"Value": 64}, "Info": 5}},
    {"Section": {"Index": 7, "Name": {"Name": ".rodata..Lanon.1"}, "Flags": {"Value": 2},
      "SectionData": {"Bytes": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                0, 10, 0, 0, 0, 0, 0, 0]}}},
    {"Section": {"Index": 8, "Name": {"Name": ".bss..Lanon.3"}, "Flags": {"Value": 3}}}
  ],
  "Relocations": [{"SectionIndex": 6, "Relocs": [
    {"Relocation": {
      "Offset": 0, "Type": {"Name": "R_AARCH64_ABS64"}, "Symbol": {"Name": ".rodata..Lanon.1"}}},
    {"Relocation": {
      "Offset": 8, "Type": {"Name": "R_AARCH64_ABS64"}, "Symbol": {"Name": ".bss..Lanon.3"}}}]}]
}]"#;

    const ADD_U32: Expect = Expect::binary("add", Op::Add, Int::U32, Int::U32);

    fn object(listing: &str, sections: &str) -> Object {
        Object {
            functions: parse_objdump(listing).unwrap(),
            elf: parse_readobj(sections).unwrap(),
        }
    }

    /// Checks `add` in `listing` with `ADD_SECTIONS`.
    fn check(listing: &str, expect: &Expect) -> Result<BTreeSet<(String, i64)>, String> {
        let object = object(listing, ADD_SECTIONS);
        check_function(&object, &object.functions[0], expect)
    }

    #[test]
    fn parses_instructions_and_relocations() {
        let functions = parse_objdump(ADD).unwrap();
        assert_eq!(functions.len(), 2);
        let f = &functions[0];
        assert_eq!((f.name.as_str(), f.section.as_str()), ("add", ".text.add"));
        assert_eq!(f.insns.len(), 11);
        assert_eq!(
            f.insns[1],
            Insn {
                addr: 4,
                mnemonic: "b.hs".into(),
                operands: "0x10 <add+0x10>".into(),
                reloc: None
            }
        );
        assert_eq!(f.insns[6].operand_list(), ["x2", "x2", "#0x0"]);
        assert_eq!(
            f.insns[6].reloc,
            Some(Reloc {
                kind: "R_AARCH64_ADD_ABS_LO12_NC".into(),
                symbol: ".rodata..Lanon.2".into(),
                addend: 0
            })
        );
        assert_eq!(branch_target(&f.insns[1]), Some(0x10));
        assert_eq!(branch_target(&f.insns[7]), None);
        assert_eq!(functions[1].name, ADD_U32.entry_point());
        assert_eq!(split_addend(".data+0x18"), (".data", 0x18));
        assert_eq!(split_addend("sym-0x8"), ("sym", -8));
        assert_eq!(split_addend("f::<u8, u8>"), ("f::<u8, u8>", 0));
    }

    #[test]
    fn a_local_entry_point_is_found_by_its_section() {
        let object = object(ADD, ADD_SECTIONS);
        let call = &object.functions[0].insns[7];
        assert!(object.is_report_call(call));
        assert_eq!(object.callee(call), Some(ADD_U32.entry_point().as_str()));
        // A call within a section has no relocation.
        let call = Insn {
            addr: 0,
            mnemonic: "bl".into(),
            operands: "0x40 <core::panic::overflow::report_neg_overflow::<i8>>".into(),
            reloc: None,
        };
        assert_eq!(
            object.callee(&call),
            Some("core::panic::overflow::report_neg_overflow::<i8>")
        );
    }

    #[test]
    fn entry_points_and_site_registers() {
        assert_eq!(
            Expect::binary("f", Op::Shl, Int::U64, Int::U32).entry_point(),
            "core::panic::overflow::report_overflow::<u64, u32>"
        );
        assert_eq!(
            Expect::neg("f", Int::Isize).entry_point(),
            "core::panic::overflow::report_neg_overflow::<isize>"
        );
        let register = |ty, rhs: Option<Int>| {
            let expect = match rhs {
                Some(rhs) => Expect::binary("f", Op::Add, ty, rhs),
                None => Expect::neg("f", ty),
            };
            expect.site_register()
        };
        assert_eq!(register(Int::I32, None), "x1");
        assert_eq!(register(Int::U32, Some(Int::U32)), "x2");
        assert_eq!(register(Int::I128, None), "x2");
        assert_eq!(register(Int::I128, Some(Int::I128)), "x4");
        assert_eq!(register(Int::U128, Some(Int::U32)), "x3");
        assert_eq!(register(Int::U8, Some(Int::U128)), "x4");
        for ty in Int::ALL {
            assert_eq!(Int::from_code(ty.code()), Some(ty));
        }
    }

    #[test]
    fn checks_the_entry_point_and_the_site() {
        let sites = check(ADD, &ADD_U32).unwrap();
        assert_eq!(
            sites.into_iter().collect::<Vec<_>>(),
            [(".rodata..Lanon.2".to_string(), 0)]
        );

        let expect = Expect::binary("add", Op::Add, Int::U64, Int::U64);
        let err = check(ADD, &expect).unwrap_err();
        assert!(
            err.contains("is to core::panic::overflow::report_wrapped_overflow::<u32>, want core::panic::overflow::report_wrapped_overflow::<u64>"),
            "{err}"
        );

        let expect = Expect::binary("add", Op::Sub, Int::U32, Int::U32);
        let err = check(ADD, &expect).unwrap_err();
        assert!(err.contains("the operation is 0, want 1 (Sub)"), "{err}");

        let object = object(ADD, &ADD_SECTIONS.replacen("0, 10,", "0, 9,", 1));
        let err = check_function(&object, &object.functions[0], &ADD_U32).unwrap_err();
        assert!(err.contains("the type is 9 (u16), want 10 (u32)"), "{err}");
    }

    #[test]
    fn a_site_in_writable_data_fails() {
        let sections = ADD_SECTIONS.replacen(
            r#"".rodata..Lanon.2"}, "Flags": {"Value": 2}"#,
            r#"".rodata..Lanon.2"}, "Flags": {"Value": 3}"#,
            1,
        );
        let object = object(ADD, &sections);
        let err = check_function(&object, &object.functions[0], &ADD_U32).unwrap_err();
        assert!(err.contains("which is not read-only data"), "{err}");
    }

    #[test]
    fn a_site_without_a_location_fails() {
        let sections = ADD_SECTIONS.replace(r#""Offset": 0,"#, r#""Offset": 16,"#);
        let object = object(ADD, &sections);
        let err = check_function(&object, &object.functions[0], &ADD_U32).unwrap_err();
        assert!(err.contains("the location is not"), "{err}");
    }

    #[test]
    fn a_site_whose_flag_is_not_writable_fails() {
        let sections = ADD_SECTIONS.replace(
            r#""Symbol": {"Name": ".bss..Lanon.3"}"#,
            r#""Symbol": {"Name": ".rodata..Lanon.1"}"#,
        );
        let elf = object(ADD, &sections);
        let err = check_function(&elf, &elf.functions[0], &ADD_U32).unwrap_err();
        assert!(
            err.contains("the flag is not a relocation to writable data"),
            "{err}"
        );
        let sections = ADD_SECTIONS.replace(r#""Offset": 8,"#, r#""Offset": 16,"#);
        let elf = object(ADD, &sections);
        let err = check_function(&elf, &elf.functions[0], &ADD_U32).unwrap_err();
        assert!(
            err.contains("the flag is not a relocation to writable data"),
            "{err}"
        );
    }

    #[test]
    fn the_site_is_followed_through_moves_and_must_be_in_its_register() {
        let moved = ADD
            .replace("adrp\tx2", "adrp\tx10")
            .replace("add\tx2, x2", "add\tx10, x10")
            .replace("\tbl\t", "\tmov\tx2, x10\n      1c:      \tbl\t");
        // The `mov` shares the address of the `bl`, which is fine for this check.
        assert!(check(&moved, &ADD_U32).is_ok(), "{moved}");

        let elsewhere = ADD
            .replace("adrp\tx2", "adrp\tx1")
            .replace("add\tx2, x2", "add\tx1, x1");
        let err = check(&elsewhere, &ADD_U32).unwrap_err();
        assert!(err.contains("x2 is not set before the call"), "{err}");

        let other_page = ADD.replace("\tx2, 0x0 <add>", "\tx3, 0x0 <add>");
        let err = check(&other_page, &ADD_U32).unwrap_err();
        assert!(err.contains("no `adrp x2`"), "{err}");
    }

    #[test]
    fn the_site_may_be_loaded_by_an_instance_that_only_this_call_uses() {
        // LLVM dropped the site argument of the instance and loads the site in the instance.
        let specialized = ADD
            .replace("adrp\tx2", "nop\t")
            .replace("add\tx2, x2, #0x0", "nop\t")
            .replace(
                "\t\t0000000000000014:  R_AARCH64_ADR_PREL_PG_HI21\t.rodata..Lanon.2\n",
                "",
            )
            .replace(
                "\t\t0000000000000018:  R_AARCH64_ADD_ABS_LO12_NC\t.rodata..Lanon.2\n",
                "",
            )
            .replace(
                "       0:      \tret\n",
                "       0:      \tadrp\tx8, 0x0\n\
                 \t\t0000000000000000:  R_AARCH64_ADR_PREL_PG_HI21\t.rodata..Lanon.2\n\
                 \x20      4:      \tadd\tx8, x8, #0x0\n\
                 \t\t0000000000000004:  R_AARCH64_ADD_ABS_LO12_NC\t.rodata..Lanon.2\n\
                 \x20      8:      \tret\n",
            );
        let sites = check(&specialized, &ADD_U32).unwrap_or_else(|e| panic!("{e}\n{specialized}"));
        assert_eq!(
            sites.into_iter().collect::<Vec<_>>(),
            [(".rodata..Lanon.2".to_string(), 0)]
        );

        // The instance no longer takes the operands, only the site, whose location it reads.
        let dropped = ADD
            .replace("adrp\tx2", "adrp\tx0")
            .replace("add\tx2, x2", "add\tx0, x0");
        let err = check(&dropped, &ADD_U32).unwrap_err();
        assert!(err.contains("x2 is not set before the call"), "{err}");
        let dropped = dropped.replace(
            "       0:      \tret\n",
            "       0:      \tldr\tx16, [x0]\n       4:      \tret\n",
        );
        assert!(check(&dropped, &ADD_U32).is_ok(), "{dropped}");

        // Neither the call nor the instance loads it.
        let nowhere = specialized.replace("add\tx8, x8, #0x0", "mov\tx8, x9");
        let err = check(&nowhere, &ADD_U32).unwrap_err();
        assert!(err.contains("x2 is not set before the call"), "{err}");
        assert!(err.contains("loads 0 site descriptors"), "{err}");
    }

    #[test]
    fn a_panic_or_a_trap_fails() {
        let text = ADD.replace(
            ".text._RINvNtNtCs55EyLgL6L9L_4core5panic8overflow23report_wrapped_overflowmECs1_14aarch64_no_std\n",
            "core::panicking::panic_const::panic_const_add_overflow\n",
        );
        let err = check(&text, &ADD_U32).unwrap_err();
        assert!(
            err.contains("references core::panicking::panic_const"),
            "{err}"
        );

        let text = ADD.replace("\tmov\tw0, w9\n      24", "\tbrk\t#0x1\n      24");
        let err = check(&text, &ADD_U32).unwrap_err();
        assert!(err.contains("trap"), "{err}");
    }

    #[test]
    fn a_call_must_return_with_the_result() {
        // The path after the call loops back onto itself.
        let text = ADD.replace("\tmov\tw0, w9\n      24", "\tb\t0x20 <add+0x20>\n      24");
        let err = check(&text, &ADD_U32).unwrap_err();
        assert!(err.contains("no path from the call at 0x1c"), "{err}");

        let text = ADD.replace("\tmov\tw0, w9\n      24", "\tmov\tw1, w9\n      24");
        let err = check(&text, &ADD_U32).unwrap_err();
        assert!(
            err.contains("from the call at 0x1c returns at 0x28 without setting x0"),
            "{err}"
        );
        // Unless the function returns nothing.
        assert!(check(&text, &ADD_U32.in_place()).is_ok());
    }

    #[test]
    fn functions_outside_the_table_fail() {
        let text = ADD.replace("<add>", "<add_more>");
        let object = object(&text, ADD_SECTIONS);
        let outcome = check_aarch64(&object, Path::new("x"));
        assert!(outcome.failures.iter().any(|f| f.starts_with(
            "no_other_functions: functions missing from AARCH64_FUNCTIONS: [\"add_more\"]"
        )));
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
        let text = "0000000000000000 <f>:\n  0:  ret\n  0000000000000000:  R_AARCH64_CALL26\n";
        assert!(matches!(
            parse_objdump(text),
            Err(ObjdumpError::BadRelocation(3, _))
        ));
    }

    #[test]
    fn readobj_errors() {
        assert!(matches!(parse_readobj("{"), Err(ReadobjError::Json(_))));
        assert_eq!(
            parse_readobj(r#"[{"Sections": []}, {"Sections": []}]"#).unwrap_err(),
            ReadobjError::Files(2)
        );
        let text = r#"[{"Sections": [], "Relocations": [{"SectionIndex": 3, "Relocs": []}]}]"#;
        assert_eq!(
            parse_readobj(text).unwrap_err(),
            ReadobjError::UnknownRelocationSection(3)
        );
    }
}
