//! `bench`: what `-Coverflow-checks=report` costs next to `on` (panic) and `off`, in kernel
//! `.text`, userspace instructions and bytes per check site.
//! Writes `BENCHMARKS.md` and `BENCHMARKS.json`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::ctx::{Arch, Ctx, Mode};
use crate::kernel;
use crate::measure::{
    geomean, mode_flags, parse_callgrind, ratio, rust_objects, section_sizes, text_size, Triple,
    SECTION_KINDS,
};
use crate::run::{capture, display, Lock};
use crate::toolchain;

const WORKLOADS: &[&str] = &[
    "checksum",
    "hash",
    "matmul",
    "bignum",
    "parse",
    "blend",
    "histogram",
    "adler32",
];
const MODES: [Mode; 3] = [Mode::Off, Mode::Panic, Mode::Report];
/// Check sites in the generated crate of the per-site measurement.
const SITES: usize = 1000;

#[derive(clap::Args, Default)]
pub struct Args {
    /// Only the userspace and per-site measurements (no kernel builds or boots).
    #[arg(long)]
    pub no_kernel: bool,
    /// Measure this toolchain directory instead of the current one (e.g. an older build, for a
    /// before/after comparison); implies --no-kernel.
    #[arg(long)]
    pub toolchain: Option<PathBuf>,
    /// Write `<DIR>/BENCHMARKS.md` and `<DIR>/BENCHMARKS.json` (default: the repository).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Kernel architectures to measure (repeatable; default: x86_64 and arm64). Each takes three
    /// kernel builds, about 9 minutes each from an empty directory on 2 cores.
    #[arg(long, value_enum)]
    pub arch: Vec<Arch>,
    /// Also measure this toolchain directory (e.g. the series before a change) in the same run,
    /// and print the userspace ratios and bytes per site of both side by side.
    #[arg(long, value_name = "DIR")]
    pub baseline: Option<PathBuf>,
    /// Skip the crates.io workloads of `bench/crates` (3 modes x 2 opt-levels, x86_64
    /// instructions and aarch64 code size; about 6 minutes from nothing, 2 when cached).
    #[arg(long)]
    pub no_crates: bool,
    /// Build the userspace and crates.io workloads' `report` mode with
    /// `-Zmerge-overflow-reports` too (`patches/rust-trap` 2). The kernel has no vector registers, so
    /// merging would change nothing there: its builds are the same either way.
    #[arg(long)]
    pub merge_reports: bool,
    /// Skip the kernel run-time measurements (`runtime`: three more kernel builds per
    /// architecture, two of them from an empty directory, and six boots under QEMU `-icount`).
    #[arg(long)]
    pub no_runtime: bool,
}

#[derive(Serialize, Default)]
struct Results {
    date: String,
    machine: String,
    toolchain: String,
    /// Whether `report` had `-Zmerge-overflow-reports` (`--merge-reports`).
    merge_reports: bool,
    /// Instructions per workload (callgrind), userspace, x86_64, opt-level 2.
    userspace: BTreeMap<String, Triple>,
    userspace_geomean_report_panic: f64,
    userspace_geomean_report_off: f64,
    userspace_geomean_panic_off: f64,
    /// The same, built with `NO_PASSES`: what the LLVM passes gain in each mode.
    userspace_without_passes: BTreeMap<String, Triple>,
    /// Report mode's instructions per workload with `FLOOR_TRAP` as the report: what continuing
    /// after a failed check costs with a lowering that clobbers nothing and cannot unwind.
    userspace_report_floor: BTreeMap<String, u64>,
    perf: String,
    /// `.text` bytes of the generated crate with `SITES` checked operations, x86_64 O2.
    sites_text: Triple,
    /// The same for `aarch64-unknown-none`.
    sites_text_aarch64: Triple,
    /// `.text` bytes of every Rust object and of vmlinux, per architecture.
    kernel: BTreeMap<String, BTreeMap<String, Triple>>,
    /// Code, tables and descriptors of the same builds, per architecture.
    kernel_sections: BTreeMap<String, KernelSections>,
    /// The same userspace and per-site measurements with `--baseline`.
    baseline: Option<Baseline>,
    /// The crates.io workloads of `bench/crates`.
    crates: Option<crate::crates::CratesResults>,
    /// Kernel run time in instructions under QEMU `-icount`, per architecture (`runtime`).
    runtime: BTreeMap<String, crate::runtime::Results>,
}

/// The bytes of the kernel builds by kind of section, the traps, and bloat-o-meter's summary.
#[derive(Serialize, Default)]
struct KernelSections {
    /// Summed over every Rust object, by kind (`measure::SECTION_KINDS`).
    rust: BTreeMap<String, Triple>,
    /// Of `vmlinux`, by kind.
    vmlinux: BTreeMap<String, Triple>,
    /// Check sites that trap in the report-mode Rust objects (`ud1` or `brk #0x50xx-0x53xx`).
    traps: u64,
    /// Check sites that still call `core`'s report entry point in report mode (operands wider
    /// than a register).
    report_calls: u64,
    /// Calls to `core`'s `panic_const_*_overflow` in the panic-mode Rust objects: the checks
    /// that survive optimisation in panic mode.
    panic_calls: u64,
    /// Bytes of the functions of the generated sites crate compiled with the kernel's own rustc
    /// command line (target, code model, relocation model, features, trap template), by shape.
    sites: BTreeMap<String, Triple>,
    /// The same with `-Copt-level=s` instead of the kernel's opt-level, by shape.
    sites_for_size: BTreeMap<String, Triple>,
    /// The same functions in report mode with the other lowerings considered, by shape.
    alternatives: BTreeMap<String, Alternatives>,
    /// The last two lines of `scripts/bloat-o-meter` of the panic `vmlinux` against the report
    /// one: functions added, removed, grown and shrunk, and the total.
    bloat_o_meter: Vec<String>,
}

/// Bytes of the sites crate's functions compiled with report mode's command line and another
/// lowering of a failed check (the alternatives of the cover letter).
#[derive(Serialize, Default, Clone, Copy)]
struct Alternatives {
    /// Without the trap template: every failed check calls the report entry point with a
    /// descriptor and the operands, as C calls `__ubsan_handle_add_overflow(data, lhs, rhs)`.
    call: u64,
    /// With a template that is only a trap of the size of UBSAN's (`BARE_TRAP_X86_64`,
    /// `BARE_TRAP_ARM64`): no bug-table entry, no descriptor.
    bare_trap: u64,
}

/// UBSAN's trap for an add overflow as clang emits it with `-fsanitize-trap` on x86_64 (5 bytes)
/// and arm64 (`0x5500 | SanitizerHandler::AddOverflow`, 4 bytes).
const BARE_TRAP_X86_64: &str = "ud1l 0(%eax), %eax\n";
const BARE_TRAP_ARM64: &str = "brk #0x5500\n";

/// The userspace and per-site measurements of one toolchain.
#[derive(Serialize, Default)]
struct Baseline {
    toolchain: String,
    userspace: BTreeMap<String, Triple>,
    sites_text: Triple,
    sites_text_aarch64: Triple,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let toolchain = match &args.toolchain {
        Some(dir) => fs::canonicalize(dir)
            .with_context(|| format!("no toolchain directory at {}", dir.display()))?,
        None => toolchain::run(ctx, &toolchain::Args::default())?,
    };
    if !toolchain::supports_report(&toolchain) {
        bail!(
            "{} does not accept -Coverflow-checks=report; build the patched toolchain with \
             `toolchain`",
            toolchain.display()
        );
    }
    let dir = ctx.work.join("bench");
    fs::create_dir_all(&dir)?;
    let mut results = Results {
        date: capture_line("date", &["-u"])?,
        machine: machine()?,
        toolchain: capture_line(toolchain.join("bin/rustc"), &["-vV"])?.replace('\n', "; "),
        ..Default::default()
    };

    let merge = args.merge_reports;
    results.merge_reports = merge;
    let measured = measure(ctx, &toolchain, &dir, merge)?;
    results.userspace_geomean_report_panic = geomean(&measured.userspace, Triple::report_panic);
    results.userspace_geomean_report_off = geomean(&measured.userspace, Triple::report_off);
    results.userspace_geomean_panic_off = geomean(&measured.userspace, Triple::panic_off);
    results.perf = perf(&dir.join("workloads-report"));
    results.userspace = measured.userspace;
    results.sites_text = measured.sites_text;
    results.sites_text_aarch64 = measured.sites_text_aarch64;
    eprintln!("== userspace workloads without the series' LLVM passes ({NO_PASSES})");
    results.userspace_without_passes =
        userspace(ctx, &toolchain.join("bin/rustc"), &dir, merge, &[NO_PASSES])?;
    eprintln!("== userspace workloads, report mode through a trap that clobbers nothing");
    results.userspace_report_floor = report_floor(ctx, &toolchain.join("bin/rustc"), &dir, merge)?;
    if let Some(base) = &args.baseline {
        let base = fs::canonicalize(base)
            .with_context(|| format!("no toolchain directory at {}", base.display()))?;
        eprintln!("== baseline {}", base.display());
        results.baseline = Some(measure(ctx, &base, &dir.join("baseline"), merge)?);
    }

    if !args.no_crates {
        eprintln!("== crates.io workloads (bench/crates)");
        results.crates = Some(crate::crates::measure(ctx, &toolchain, merge)?);
    }
    if !args.no_kernel && args.toolchain.is_none() {
        let arches = if args.arch.is_empty() {
            vec![Arch::X86_64, Arch::Arm64]
        } else {
            args.arch.clone()
        };
        for arch in arches {
            eprintln!("== kernel .text, {arch}");
            let (sizes, sections) = kernel_sizes(ctx, &toolchain, arch)?;
            results.kernel.insert(arch.to_string(), sizes);
            results.kernel_sections.insert(arch.to_string(), sections);
            if !args.no_runtime {
                eprintln!("== kernel run time, {arch}");
                let runtime = crate::runtime::measure(ctx, &toolchain, arch)?;
                results.runtime.insert(arch.to_string(), runtime);
            }
        }
    }

    let out = args.out.clone().unwrap_or_else(|| ctx.repo.clone());
    fs::create_dir_all(&out)?;
    fs::write(
        out.join("BENCHMARKS.json"),
        serde_json::to_string_pretty(&results)? + "\n",
    )?;
    let markdown = markdown(&results);
    fs::write(out.join("BENCHMARKS.md"), &markdown)?;
    print!("{markdown}");
    eprintln!("wrote {}", out.join("BENCHMARKS.md").display());
    Ok(())
}

/// Measures the userspace workloads and the bytes per check site with `toolchain`, in `dir`.
fn measure(ctx: &Ctx, toolchain: &Path, dir: &Path, merge: bool) -> Result<Baseline> {
    fs::create_dir_all(dir)?;
    let mut out = Baseline {
        toolchain: format!(
            "`{}`: {}",
            toolchain.display(),
            capture_line(toolchain.join("bin/rustc"), &["-V"])?
        ),
        ..Default::default()
    };
    eprintln!("== userspace workloads (callgrind)");
    let rustc = toolchain.join("bin/rustc");
    out.userspace = userspace(ctx, &rustc, dir, merge, &[])?;

    // The sites crate has no loops: nothing to merge.
    eprintln!("== .text per check site");
    let sites = dir.join("sites.rs");
    fs::write(&sites, sites_crate())?;
    for mode in MODES {
        let obj = dir.join(format!("sites-{mode}.o"));
        compile(
            &rustc,
            (mode, false),
            &["-Copt-level=2", "--crate-type=lib", "--emit=obj", "-o"],
            &obj,
            &sites,
        )?;
        out.sites_text.set(mode, text_size(&obj)?);
    }
    out.sites_text_aarch64 = sites_aarch64(ctx, &rustc, toolchain, &sites, dir)?;
    Ok(out)
}

/// The rustc flag that turns off the LLVM passes of the rustc series (`patches/rust-trap` 3 to 5), so that
/// `bench` can show what they gain in each mode.
const NO_PASSES: &str = "-Cllvm-args=-rustc-overflow-check-passes=false";

/// Instructions of each userspace workload in the three modes, built with `extra` flags too.
fn userspace(
    ctx: &Ctx,
    rustc: &Path,
    dir: &Path,
    merge: bool,
    extra: &[&str],
) -> Result<BTreeMap<String, Triple>> {
    let source = ctx.repo.join("bench/workloads.rs");
    let mut counts: BTreeMap<String, Triple> = BTreeMap::new();
    let mut outputs = BTreeMap::new();
    let suffix = if extra.is_empty() { "" } else { "-extra" };
    for mode in MODES {
        let exe = dir.join(format!("workloads-{mode}{suffix}"));
        let mut exe_flags = vec!["-Copt-level=2"];
        exe_flags.extend_from_slice(extra);
        exe_flags.push("-o");
        compile(rustc, (mode, merge), &exe_flags, &exe, &source)?;
        for &name in WORKLOADS {
            let (instructions, output) = callgrind(&exe, name)?;
            eprintln!("  {name} {mode}: {instructions} instructions");
            counts
                .entry(name.to_string())
                .or_default()
                .set(mode, instructions);
            outputs.entry(name).or_insert_with(Vec::new).push(output);
        }
    }
    for (name, outs) in &outputs {
        if outs.iter().any(|o| o != &outs[0]) {
            bail!("the workload {name} printed different results in the three modes: {outs:?}");
        }
    }
    Ok(counts)
}

/// The report of `report_floor`: a trap with the operands in its registers, which the
/// workloads never reach (none overflows).
const FLOOR_TRAP: &str = "ud1 {lhs:e}, {rhs:e}\n";

/// Report mode's instructions per workload when a failed check runs `FLOOR_TRAP` in line
/// (`-Zoverflow-report-trap`, `patches/rust-trap` 1) instead of calling an entry point: the
/// report clobbers no register and cannot unwind, so what report mode still costs over panic
/// mode is the continuation itself. Checks whose operands do not fit a register still call.
/// Fails if a workload prints something else than `userspace`'s report-mode build in `dir`.
fn report_floor(ctx: &Ctx, rustc: &Path, dir: &Path, merge: bool) -> Result<BTreeMap<String, u64>> {
    let template = dir.join("floor-trap.S");
    fs::write(&template, FLOOR_TRAP)?;
    let option = format!("-Zoverflow-report-trap={}", template.display());
    let exe = dir.join("workloads-report-floor");
    let flags = [option.as_str(), "-Copt-level=2", "-o"];
    let source = ctx.repo.join("bench/workloads.rs");
    compile(rustc, (Mode::Report, merge), &flags, &exe, &source)?;
    let mut counts = BTreeMap::new();
    for &name in WORKLOADS {
        let (instructions, output) = callgrind(&exe, name)?;
        let expected = capture_line(dir.join("workloads-report"), &[name])?;
        if output != expected {
            bail!("the workload {name} printed {output:?} through the trap, {expected:?} with the call");
        }
        eprintln!("  {name} report (trap): {instructions} instructions");
        counts.insert(name.to_string(), instructions);
    }
    Ok(counts)
}

/// What `program args...` prints, trimmed.
fn capture_line(program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Result<String> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    Ok(capture(cmd, Duration::from_secs(60))?.trim().to_string())
}

fn machine() -> Result<String> {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU", |(_, m)| m.trim());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let os = fs::read_to_string("/etc/debian_version").unwrap_or_default();
    Ok(format!("{model}, {cpus} CPUs, Debian {}", os.trim()))
}

fn compile(
    rustc: &Path,
    (mode, merge): (Mode, bool),
    flags: &[&str],
    out: &Path,
    source: &Path,
) -> Result<()> {
    let mut cmd = Command::new(rustc);
    cmd.env("RUSTC_BOOTSTRAP", "1")
        .arg("--edition=2024")
        .args(mode_flags(mode, merge))
        .args(flags)
        .arg(out)
        .arg(source);
    let shown = display(&cmd);
    let output = cmd.output().with_context(|| format!("running {shown}"))?;
    if !output.status.success() {
        bail!(
            "{shown} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

/// Instructions of `exe name` under callgrind, and what it printed.
fn callgrind(exe: &Path, name: &str) -> Result<(u64, String)> {
    let output = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(exe)
        .arg(name)
        .output()
        .context("running valgrind; run `setup`, which installs it")?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        bail!("{} {name} under callgrind failed:\n{stderr}", exe.display());
    }
    let count = parse_callgrind(&stderr)
        .with_context(|| format!("callgrind printed no `Collected` line:\n{stderr}"))?;
    Ok((
        count,
        String::from_utf8_lossy(&output.stdout).trim().to_string(),
    ))
}

/// Cycles from `perf stat`, or why there are none.
fn perf(exe: &Path) -> String {
    let output = Command::new("perf")
        .args(["stat", "-x,", "-e", "cycles"])
        .arg(exe)
        .arg("hash")
        .output();
    match output {
        Err(e) => format!("not measured: perf could not run ({e})"),
        Ok(o) => {
            let stderr = String::from_utf8_lossy(&o.stderr);
            match stderr.lines().find(|l| l.contains("cycles")) {
                Some(l) if l.starts_with("<not supported>") || l.starts_with("<not counted>") => {
                    format!("not measured: `perf stat -e cycles` says {l:?} on this machine")
                }
                Some(l) => format!("perf stat works here ({l}); cycles are not tabulated"),
                None => format!("not measured: perf stat printed no cycles line ({stderr:?})"),
            }
        }
    }
}

/// `.text` of the sites crate for `aarch64-unknown-none`, in the three modes, compiled against a
/// `core` that this toolchain builds for that target (in report mode, as the kernel builds it).
fn sites_aarch64(
    ctx: &Ctx,
    rustc: &Path,
    toolchain: &Path,
    sites: &Path,
    dir: &Path,
) -> Result<Triple> {
    const TARGET: &[&str] = &["--target", "aarch64-unknown-none", "--sysroot=/dev/null"];
    let out = dir.join("aarch64");
    fs::create_dir_all(&out)?;
    let core_src = toolchain.join("lib/rustlib/src/rust/library/core/src/lib.rs");
    let core = out.join("libcore.rlib");
    let builtins = out.join("libcompiler_builtins.rlib");
    let extern_core = format!("core={}", core.display());
    let extern_builtins = format!("compiler_builtins={}", builtins.display());
    let mut flags = TARGET.to_vec();
    flags.extend([
        "--crate-type=rlib",
        "--crate-name=core",
        "-Copt-level=2",
        "-o",
    ]);
    eprintln!("  building core for aarch64-unknown-none");
    compile(rustc, (Mode::Report, false), &flags, &core, &core_src)?;
    let mut flags = TARGET.to_vec();
    flags.extend([
        "--crate-type=rlib",
        "--crate-name=compiler_builtins",
        "--extern",
    ]);
    flags.extend([extern_core.as_str(), "-Copt-level=2", "-o"]);
    let builtins_src = ctx.repo.join("conformance/aarch64_compiler_builtins.rs");
    compile(
        rustc,
        (Mode::Report, false),
        &flags,
        &builtins,
        &builtins_src,
    )?;

    let mut text = Triple::default();
    for mode in MODES {
        let obj = out.join(format!("sites-{mode}.o"));
        let mut flags = TARGET.to_vec();
        flags.extend(["--extern", &extern_core, "--extern", &extern_builtins]);
        flags.extend(["-Copt-level=2", "--crate-type=lib", "--emit=obj", "-o"]);
        compile(rustc, (mode, false), &flags, &obj, sites)?;
        text.set(mode, text_size(&obj)?);
    }
    Ok(text)
}

/// The first line of every generated sites crate.
const SITES_HEADER: &str = "// Generated by `bench`: one checked operation per function.\n";

/// A `no_std` crate of `SITES` leaf functions, each with one checked `+`, `-` or `*`.
fn sites_crate() -> String {
    format!(
        "{SITES_HEADER}#![no_std]\n{}",
        site_functions(SiteShape::Leaf)
    )
}

/// The shape of the functions of the generated sites crate.
#[derive(Clone, Copy)]
enum SiteShape {
    /// `(a ^ i) op b`.
    Leaf,
    /// The same result, then passed to an external function: the function has a frame in every
    /// mode, as most kernel functions do.
    Call,
}

impl SiteShape {
    const ALL: [SiteShape; 2] = [SiteShape::Leaf, SiteShape::Call];

    fn name(self) -> &'static str {
        match self {
            SiteShape::Leaf => "leaf",
            SiteShape::Call => "call",
        }
    }
}

/// `SITES` functions of `shape`, each with one checked `+`, `-` or `*`.
fn site_functions(shape: SiteShape) -> String {
    let mut s = String::new();
    if let SiteShape::Call = shape {
        s.push_str("unsafe extern \"C\" {\n    fn sink(x: u32);\n}\n");
    }
    for i in 0..SITES {
        let op = ["+", "-", "*"][i % 3];
        let body = match shape {
            SiteShape::Leaf => format!("    (a ^ {i}) {op} b\n"),
            SiteShape::Call => format!(
                "    let r = (a ^ {i}) {op} b;\n    // SAFETY: `sink` takes any value.\n    \
                 unsafe {{ sink(r) }};\n    r\n"
            ),
        };
        writeln!(
            s,
            "#[unsafe(no_mangle)]\npub fn site_{i}(a: u32, b: u32) -> u32 {{\n{body}}}"
        )
        .unwrap();
    }
    s
}

/// Compiles the sites crate of each shape with the command line that kbuild used for
/// `samples/rust/rust_minimal.o` in the kernel build directory `out` (its target, code model,
/// relocation model, target features, overflow-checks flags and trap template), and returns
/// the bytes of its `site_*` functions.
fn kernel_sites(
    ctx: &Ctx,
    out: &Path,
    name: &str,
    trap: TrapTemplate,
    for_size: bool,
) -> Result<Vec<(SiteShape, u64)>> {
    let cmd_file = out.join("samples/rust/.rust_minimal.o.cmd");
    let saved = fs::read_to_string(&cmd_file).with_context(|| {
        format!(
            "reading {}: the per-site measurement uses the command line kbuild saved for \
             samples/rust/rust_minimal.o, which CONFIG_SAMPLE_RUST_MINIMAL=y builds",
            cmd_file.display()
        )
    })?;
    let dir = ctx.work.join("bench").join(format!("sites-{name}"));
    fs::create_dir_all(&dir)?;
    let mut bytes = Vec::new();
    for shape in SiteShape::ALL {
        let source = dir.join(format!("sites-{}.rs", shape.name()));
        fs::write(&source, format!("{SITES_HEADER}{}", site_functions(shape)))?;
        let obj = dir.join(format!("sites-{}.o", shape.name()));
        let command = sites_command(&saved, &source, &obj, &dir)
            .and_then(|c| with_trap_template(&c, &trap))
            .and_then(|c| {
                if for_size {
                    with_size_opt_level(&c)
                } else {
                    Ok(c)
                }
            })
            .with_context(|| format!("in {}", cmd_file.display()))?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(&command).current_dir(out);
        capture(cmd, Duration::from_secs(300))?;
        bytes.push((shape, function_bytes(&obj, "site_")?));
    }
    Ok(bytes)
}

/// `command` with its words that start with `option` set to `option` followed by `value`, or
/// removed if `value` is `None`; `None` if it has no such word.
fn with_option(command: &str, option: &str, value: Option<&str>) -> Option<String> {
    let words: Vec<&str> = command.split(' ').collect();
    if !words.iter().any(|w| w.starts_with(option)) {
        return None;
    }
    let words = words
        .into_iter()
        .filter_map(|w| match (w.starts_with(option), value) {
            (false, _) => Some(w.to_string()),
            (true, Some(value)) => Some(format!("{option}{value}")),
            (true, None) => None,
        });
    Some(words.collect::<Vec<_>>().join(" "))
}

/// `command` with `-Copt-level=s`, as `CONFIG_CC_OPTIMIZE_FOR_SIZE=y` builds Rust, instead of its
/// own opt-level.
fn with_size_opt_level(command: &str) -> Result<String> {
    with_option(command, "-Copt-level=", Some("s")).context("no `-Copt-level=` in the command line")
}

/// Which trap template the per-site measurement compiles with.
enum TrapTemplate {
    /// The one of the kernel's command line, if any.
    Kernel,
    /// None: failed checks call the report entry point.
    Without,
    /// This file instead of the kernel's.
    Replaced(PathBuf),
}

/// `command` with its `-Zoverflow-report-trap=` option kept, removed or replaced.
fn with_trap_template(command: &str, trap: &TrapTemplate) -> Result<String> {
    const OPTION: &str = "-Zoverflow-report-trap=";
    let rewritten = match trap {
        TrapTemplate::Kernel => return Ok(command.to_string()),
        TrapTemplate::Without => with_option(command, OPTION, None),
        TrapTemplate::Replaced(file) => {
            with_option(command, OPTION, Some(&file.display().to_string()))
        }
    };
    rewritten.with_context(|| {
        format!(
            "no `{OPTION}` in the report-mode command line: the alternatives to the trap are \
             measured only where the kernel uses it (x86_64 and arm64 with \
             CONFIG_DEBUG_BUGVERBOSE=y)"
        )
    })
}

/// kbuild's saved command line for `samples/rust/rust_minimal.o`, rewritten to compile
/// `source` to `obj` in `dir`: no dependency file, no objtool, no `missing_docs` lint.
fn sites_command(saved: &str, source: &Path, obj: &Path, dir: &Path) -> Result<String> {
    let line = saved
        .lines()
        .find_map(|l| l.strip_prefix("savedcmd_samples/rust/rust_minimal.o := "))
        .context("no `savedcmd_samples/rust/rust_minimal.o` line")?;
    // objtool, where it runs, follows the compiler after a `;`.
    let rustc = line.split(';').next().unwrap_or_default();
    let mut words = Vec::new();
    let (mut sources, mut objects) = (0, 0);
    let mut tokens = rustc.split_whitespace();
    while let Some(token) = tokens.next() {
        if token.ends_with("/rust_minimal.rs") {
            sources += 1;
            words.push(source.display().to_string());
        } else if token.starts_with("--emit=obj=") {
            objects += 1;
            words.push(format!("--emit=obj={}", obj.display()));
        } else if token == "--out-dir" {
            tokens.next();
            words.push(format!("--out-dir {}", dir.display()));
        } else if token.starts_with("RUST_MODFILE=") {
            words.push("RUST_MODFILE=sites".into());
        } else if !token.starts_with("--emit=dep-info=") && token != "-Wmissing_docs" {
            words.push(token.to_string());
        }
    }
    if (sources, objects) != (1, 1) {
        bail!(
            "expected one `.../rust_minimal.rs` and one `--emit=obj=` in the command line, \
             found {sources} and {objects}: {rustc}"
        );
    }
    Ok(words.join(" "))
}

/// The summed sizes of the functions of `obj` whose names start with `prefix` (`llvm-nm -S`:
/// without the padding between functions).
fn function_bytes(obj: &Path, prefix: &str) -> Result<u64> {
    let mut cmd = Command::new("llvm-nm-22");
    cmd.args(["-S", "-t", "d"]).arg(obj);
    let listing = capture(cmd, Duration::from_secs(60))?;
    let mut total = 0;
    for line in listing.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if let [_, size, kind, name] = fields[..] {
            if name.starts_with(prefix) && kind.eq_ignore_ascii_case("t") {
                total += size
                    .parse::<u64>()
                    .with_context(|| format!("llvm-nm: {line}"))?;
            }
        }
    }
    if total == 0 {
        bail!("no `{prefix}*` function in {}", obj.display());
    }
    Ok(total)
}

/// Builds the Rust KUnit configuration in the three modes and measures each Rust object, and
/// the sections, traps and bloat-o-meter summary of the builds.
fn kernel_sizes(
    ctx: &Ctx,
    toolchain: &Path,
    arch: Arch,
) -> Result<(BTreeMap<String, Triple>, KernelSections)> {
    let src = ctx.linux_src();
    let mut sizes: BTreeMap<String, Triple> = BTreeMap::new();
    let mut sections = KernelSections::default();
    for mode in MODES {
        let out = ctx.work.join("bench").join(format!("kernel-{arch}-{mode}"));
        let fragment = kernel::read_fragment(
            ctx,
            &[
                "kernel/base.config".into(),
                format!("kernel/{arch}.config"),
                "kunit/rust.kunitconfig".into(),
            ],
            mode,
        )?;
        {
            let _lock = Lock::acquire(&ctx.heavy_lock())?;
            kernel::make_kernel(
                ctx,
                &src,
                &out,
                arch,
                &ctx.make_vars(toolchain),
                &fragment,
                kernel::Base::Defaults,
                &format!("bench-kernel-{arch}-{mode}"),
            )?;
        }
        let mut rust: BTreeMap<&str, u64> = BTreeMap::new();
        for obj in rust_objects(&out)? {
            let name = obj.strip_prefix(&out).unwrap_or(&obj).display().to_string();
            let kinds = section_sizes(&obj)?;
            let text = kinds.get("text").copied().unwrap_or(0);
            sizes.entry(name).or_default().set(mode, text);
            for (kind, size) in kinds {
                *rust.entry(kind).or_default() += size;
            }
            // Off mode has no check sites to count.
            match mode {
                Mode::Report => {
                    let sites = count_sites(&obj, arch)?;
                    sections.traps += sites.traps;
                    sections.report_calls += sites.report_calls;
                }
                Mode::Panic => sections.panic_calls += count_sites(&obj, arch)?.panic_calls,
                Mode::Off => {}
            }
        }
        let name = format!("{arch}-{mode}");
        for (shape, bytes) in kernel_sites(ctx, &out, &name, TrapTemplate::Kernel, false)? {
            sections
                .sites
                .entry(shape.name().into())
                .or_default()
                .set(mode, bytes);
        }
        let size = format!("{name}-size");
        for (shape, bytes) in kernel_sites(ctx, &out, &size, TrapTemplate::Kernel, true)? {
            sections
                .sites_for_size
                .entry(shape.name().into())
                .or_default()
                .set(mode, bytes);
        }
        if mode == Mode::Report {
            let bare = ctx.work.join("bench").join(format!("bare-trap-{arch}.S"));
            fs::write(
                &bare,
                match arch {
                    Arch::X86_64 => BARE_TRAP_X86_64,
                    Arch::Arm64 => BARE_TRAP_ARM64,
                },
            )?;
            let call = kernel_sites(
                ctx,
                &out,
                &format!("{name}-call"),
                TrapTemplate::Without,
                false,
            )?;
            let trap = kernel_sites(
                ctx,
                &out,
                &format!("{name}-bare-trap"),
                TrapTemplate::Replaced(bare),
                false,
            )?;
            for ((shape, call), (_, bare_trap)) in call.into_iter().zip(trap) {
                sections
                    .alternatives
                    .insert(shape.name().into(), Alternatives { call, bare_trap });
            }
        }
        let vmlinux = section_sizes(&out.join("vmlinux"))?;
        let text = vmlinux.get("text").copied().unwrap_or(0);
        sizes.entry("vmlinux".into()).or_default().set(mode, text);
        for (kind, size) in vmlinux {
            sections
                .vmlinux
                .entry(kind.into())
                .or_default()
                .set(mode, size);
        }
        for kind in SECTION_KINDS {
            let size = rust.get(kind).copied().unwrap_or(0);
            sections
                .rust
                .entry(kind.into())
                .or_default()
                .set(mode, size);
        }
    }
    let bench = ctx.work.join("bench");
    let mut cmd = Command::new("python3");
    cmd.arg(src.join("scripts/bloat-o-meter"))
        .arg(bench.join(format!("kernel-{arch}-panic/vmlinux")))
        .arg(bench.join(format!("kernel-{arch}-report/vmlinux")));
    let listing = capture(cmd, Duration::from_secs(300))?;
    sections.bloat_o_meter = listing
        .lines()
        .filter(|l| l.starts_with("add/remove:") || l.starts_with("Total:"))
        .map(str::to_string)
        .collect();
    // Objects that only exist in some modes cannot be compared.
    sizes.retain(|_, t| t.off > 0 && t.panic > 0 && t.report > 0);
    let total = sizes
        .iter()
        .filter(|(name, _)| name.as_str() != "vmlinux")
        .map(|(_, t)| *t)
        .sum();
    sizes.insert("all Rust objects".into(), total);
    Ok((sizes, sections))
}

/// The failed checks left in one object: traps, calls to the report entry point, and calls to
/// `panic_const_*_overflow`.
#[derive(Default)]
struct SiteCounts {
    traps: u64,
    report_calls: u64,
    panic_calls: u64,
}

/// Counts the check sites of `obj`: `ud1` on x86_64, `brk` in 0x5000-0x53ff on arm64, and the
/// relocations of calls to the report entry point or to a `panic_const_*_overflow`.
fn count_sites(obj: &Path, arch: Arch) -> Result<SiteCounts> {
    let mut cmd = Command::new("llvm-objdump-22");
    cmd.arg("-dr").arg("--no-show-raw-insn").arg(obj);
    let listing = capture(cmd, Duration::from_secs(300))?;
    let mut counts = SiteCounts::default();
    for line in listing.lines() {
        if is_trap(line, arch) {
            counts.traps += 1;
        } else if let Some(symbol) = call_relocation(line) {
            if symbol.contains("report_integer_overflow") {
                counts.report_calls += 1;
            } else if symbol.contains("panic_const") && symbol.ends_with("_overflow") {
                counts.panic_calls += 1;
            }
        }
    }
    Ok(counts)
}

/// The symbol of a call's relocation in an `llvm-objdump -dr` listing, without the addend.
fn call_relocation(line: &str) -> Option<&str> {
    let mut fields = line.split_whitespace().skip(1);
    match fields.next()? {
        "R_X86_64_PLT32" | "R_AARCH64_CALL26" | "R_AARCH64_JUMP26" => {
            let symbol = fields.next()?;
            Some(symbol.split_once(['-', '+']).map_or(symbol, |(s, _)| s))
        }
        _ => None,
    }
}

fn is_trap(line: &str, arch: Arch) -> bool {
    let mut fields = line.split_whitespace().skip(1);
    match (arch, fields.next(), fields.next()) {
        (Arch::X86_64, Some(insn), _) => insn.starts_with("ud1"),
        (Arch::Arm64, Some("brk"), Some(imm)) => {
            u32::from_str_radix(imm.trim_start_matches("#0x"), 16)
                .is_ok_and(|imm| (0x5000..0x5400).contains(&imm))
        }
        _ => false,
    }
}

/// Bytes per check site of a mode's `.text` over `off`'s, in the generated crate of `SITES` sites.
fn per_site(bytes: u64, off: u64) -> f64 {
    (bytes as f64 - off as f64) / SITES as f64
}

/// The `--baseline` toolchain's report/panic ratios and bytes per site next to this run's.
fn before_after(w: &mut String, r: &Results, b: &Baseline) {
    writeln!(w, "## Before and after\n").unwrap();
    writeln!(
        w,
        "The same measurements, in the same run, with the baseline toolchain ({}).\n",
        b.toolchain
    )
    .unwrap();
    writeln!(w, "| | report/panic, baseline | report/panic, this run |").unwrap();
    writeln!(w, "|---|---:|---:|").unwrap();
    for (name, t) in &r.userspace {
        if let Some(base) = b.userspace.get(name) {
            let (before, after) = (base.report_panic(), t.report_panic());
            writeln!(w, "| {name} | {before:.4} | {after:.4} |").unwrap();
        }
    }
    for (target, before, after) in [
        ("x86_64", &b.sites_text, &r.sites_text),
        ("aarch64", &b.sites_text_aarch64, &r.sites_text_aarch64),
    ] {
        writeln!(
            w,
            "| bytes per site, {target} (report − off) | {:.1} B | {:.1} B |",
            per_site(before.report, before.off),
            per_site(after.report, after.off)
        )
        .unwrap();
    }
    writeln!(w).unwrap();
}

fn markdown(r: &Results) -> String {
    let mut s = String::new();
    let w = &mut s;
    writeln!(w, "# What `-Coverflow-checks=report` costs\n").unwrap();
    writeln!(
        w,
        "Written by `cargo run --release -- bench` on {} ({}).\nToolchain: {}.\n",
        r.date, r.machine, r.toolchain
    )
    .unwrap();
    writeln!(
        w,
        "Modes: `off` is `-Coverflow-checks=off`, `panic` is `-Coverflow-checks=on` (today's \
         `CONFIG_RUST_OVERFLOW_CHECKS=y`), `report` is `-Coverflow-checks=report`{}.\n",
        if r.merge_reports {
            " `-Zmerge-overflow-reports` in userspace and for the crates.io workloads \
             (`--merge-reports`; the kernel's builds are the same either way)"
        } else {
            ""
        }
    )
    .unwrap();

    writeln!(w, "## Userspace instructions\n").unwrap();
    writeln!(
        w,
        "`bench/workloads.rs`, x86_64, `-Copt-level=2`, counted with \
         `valgrind --tool=callgrind`. No workload overflows; the three builds print the same \
         results.\n"
    )
    .unwrap();
    writeln!(
        w,
        "| workload | off | panic | report | report/panic | report/off | panic/off |"
    )
    .unwrap();
    writeln!(w, "|---|---:|---:|---:|---:|---:|---:|").unwrap();
    for (name, t) in &r.userspace {
        row(w, name, t);
    }
    writeln!(
        w,
        "| geometric mean | | | | {:.4} | {:.4} | {:.4} |\n",
        r.userspace_geomean_report_panic,
        r.userspace_geomean_report_off,
        r.userspace_geomean_panic_off
    )
    .unwrap();
    writeln!(w, "Cycles: {}.\n", r.perf).unwrap();
    floor_markdown(w, r);
    passes_markdown(w, r);

    writeln!(w, "## Bytes per check site\n").unwrap();
    writeln!(
        w,
        "A generated `no_std` crate of {SITES} functions `(a ^ i) op b` on `u32`, `op` cycling \
         through `+ - *`, `-Copt-level=2`, `.text` from `llvm-size -A` (in report mode, it \
         includes the crate's instance of the report entry point):\n"
    )
    .unwrap();
    writeln!(
        w,
        "| target | off | panic | report | report/panic | panic − off per site | report − off \
         per site |"
    )
    .unwrap();
    writeln!(w, "|---|---:|---:|---:|---:|---:|---:|").unwrap();
    for (target, t) in [
        ("x86_64-unknown-linux-gnu", &r.sites_text),
        ("aarch64-unknown-none", &r.sites_text_aarch64),
    ] {
        writeln!(
            w,
            "| {target} | {} | {} | {} | {:.3} | {:.1} B | {:.1} B |",
            t.off,
            t.panic,
            t.report,
            t.report_panic(),
            per_site(t.panic, t.off),
            per_site(t.report, t.off)
        )
        .unwrap();
    }
    writeln!(w).unwrap();

    if let Some(b) = &r.baseline {
        before_after(w, r, b);
    }
    if let Some(c) = &r.crates {
        w.push_str(&crate::crates::markdown(c));
    }

    if r.kernel.is_empty() {
        writeln!(
            w,
            "## Kernel `.text`\n\nNot measured in this run (`--no-kernel`, or `--toolchain`).\n"
        )
        .unwrap();
    }
    for (arch, sizes) in &r.kernel {
        writeln!(w, "## Kernel `.text`, {arch}\n").unwrap();
        writeln!(
            w,
            "Linux 7.2 with `configs/kernel/base.config`, `configs/kernel/{arch}.config` and \
             `configs/kunit/rust.kunitconfig` (every Rust KUnit suite and the doctests), built \
             with `LLVM=-22` in each mode; `.text*` sections from `llvm-size -A` of every object \
             rustc built, and of `vmlinux`.\n"
        )
        .unwrap();
        writeln!(
            w,
            "| object | off | panic | report | report/panic | report/off | panic/off |"
        )
        .unwrap();
        writeln!(w, "|---|---:|---:|---:|---:|---:|---:|").unwrap();
        for (name, t) in sizes {
            row(w, name, t);
        }
        writeln!(w).unwrap();
        if let Some(s) = r.kernel_sections.get(arch) {
            sections_markdown(w, arch, s);
        }
    }
    for (arch, runtime) in &r.runtime {
        let arch = <Arch as clap::ValueEnum>::from_str(arch, false)
            .expect("runtime results are keyed by architecture");
        w.push_str(&crate::runtime::markdown(arch, runtime));
    }

    s
}

/// Report mode through `FLOOR_TRAP` beside the call: what continuing costs whatever the lowering.
fn floor_markdown(w: &mut String, r: &Results) {
    if r.userspace_report_floor.is_empty() {
        return;
    }
    writeln!(w, "### What continuing costs, whatever the lowering\n").unwrap();
    writeln!(
        w,
        "Report mode built again by the same compiler with `-Zoverflow-report-trap` and the \
         template `{}` (`patches/rust-trap` 1): a failed check runs the trap in line, which \
         clobbers no register and cannot unwind, instead of calling an entry point. No workload \
         overflows, so the trap never runs; what report mode still costs over panic mode is the \
         code after each check, which a panic would have ended.\n",
        FLOOR_TRAP.trim_end()
    )
    .unwrap();
    writeln!(
        w,
        "| workload | panic | report, call | report, trap | call/panic | trap/panic |"
    )
    .unwrap();
    writeln!(w, "|---|---:|---:|---:|---:|---:|").unwrap();
    let mut floor = BTreeMap::new();
    for (name, &trap) in &r.userspace_report_floor {
        let Some(t) = r.userspace.get(name) else {
            continue;
        };
        floor.insert(
            name.clone(),
            Triple {
                off: 0,
                panic: t.panic,
                report: trap,
            },
        );
        writeln!(
            w,
            "| {name} | {} | {} | {trap} | {:.4} | {:.4} |",
            t.panic,
            t.report,
            t.report_panic(),
            ratio(trap, t.panic)
        )
        .unwrap();
    }
    writeln!(
        w,
        "| geometric mean | | | | {:.4} | {:.4} |\n",
        r.userspace_geomean_report_panic,
        geomean(&floor, Triple::report_panic)
    )
    .unwrap();
}

/// What the LLVM passes of the rustc series gain in each mode: the same workloads built with
/// and without them, by the same compiler.
fn passes_markdown(w: &mut String, r: &Results) {
    if r.userspace_without_passes.is_empty() {
        return;
    }
    writeln!(w, "### What the LLVM passes gain, per mode\n").unwrap();
    writeln!(
        w,
        "The same workloads built by the same compiler with `{NO_PASSES}`, which turns off the \
         passes that drop the checks that cannot fail and version loops of counters (rustc \
         `patches/rust-trap` 3 to 5). The passes run in every mode; the table above has them. Each cell: \
         instructions without the passes, and the ratio with/without.\n"
    )
    .unwrap();
    writeln!(
        w,
        "| workload | off, without | with/without | panic, without | with/without | report, \
         without | with/without | report/panic without |"
    )
    .unwrap();
    writeln!(w, "|---|---:|---:|---:|---:|---:|---:|---:|").unwrap();
    for (name, without) in &r.userspace_without_passes {
        let Some(with) = r.userspace.get(name) else {
            continue;
        };
        writeln!(
            w,
            "| {name} | {} | {:.4} | {} | {:.4} | {} | {:.4} | {:.4} |",
            without.off,
            ratio(with.off, without.off),
            without.panic,
            ratio(with.panic, without.panic),
            without.report,
            ratio(with.report, without.report),
            without.report_panic()
        )
        .unwrap();
    }
    writeln!(w).unwrap();
}

/// The code, tables and descriptors of one architecture's builds, and what a site costs.
fn sections_markdown(w: &mut String, arch: &str, s: &KernelSections) {
    writeln!(
        w,
        "Code, tables and descriptors of the same builds ({arch}), bytes by kind of section \
         (`llvm-size -A`: `.text*`, `.rodata*`, `.data*`, `__bug_table`), summed over the Rust \
         objects and for `vmlinux`:\n"
    )
    .unwrap();
    writeln!(
        w,
        "| bytes | off | panic | report | report/panic | report/off | panic/off |"
    )
    .unwrap();
    writeln!(w, "|---|---:|---:|---:|---:|---:|---:|").unwrap();
    for (scope, kinds) in [("Rust objects", &s.rust), ("vmlinux", &s.vmlinux)] {
        let mut total = Triple::default();
        for kind in SECTION_KINDS {
            if let Some(&t) = kinds.get(kind) {
                row(w, &format!("{scope}: {kind}"), &t);
                total = total + t;
            }
        }
        row(w, &format!("{scope}: all four"), &total);
    }
    writeln!(w).unwrap();
    if let Some(text) = s.rust.get("text").filter(|_| s.traps > 0) {
        let per = |bytes: u64| (bytes as f64 - text.off as f64) / s.traps as f64;
        writeln!(
            w,
            "{} check sites trap in the report-mode Rust objects. Rust `.text` over `off`, \
             divided by that number: {:.1} bytes in panic mode (which has fewer check sites) and \
             {:.1} in report mode (with the kernel's code model, relocation model and target \
             features; the sites that still call are counted in both).\n",
            s.traps,
            per(text.panic),
            per(text.report)
        )
        .unwrap();
    }
    if s.traps > 0 || s.panic_calls > 0 {
        writeln!(
            w,
            "Checks left after optimisation in the Rust objects: {} calls to \
             `panic_const_*_overflow` in panic mode; {} traps and {} calls to the report entry \
             point (operands wider than a register) in report mode. A failed check in panic mode \
             ends the path, so LLVM may use it to bound a loop or fold the checks after it; a \
             report continues, so those checks stay.\n",
            s.panic_calls, s.traps, s.report_calls
        )
        .unwrap();
    }
    if !s.sites.is_empty() {
        writeln!(
            w,
            "Bytes per check site with the kernel's flags: the generated crate of {SITES} \
             functions, each with one checked `+`, `-` or `*` on `u32`, compiled by the command \
             line kbuild saved for `samples/rust/rust_minimal.o` in each mode's build (target, \
             code model, relocation model, target features, and in report mode the kernel's \
             trap template). Bytes of the `site_*` functions (`llvm-nm -S`, without padding). \
             `leaf`: `(a ^ i) op b`; `call`: the same, then the result passed to an external \
             function, so that the function has a frame in every mode. Rows marked `s`: the same \
             command lines with `-Copt-level=s`, as `CONFIG_CC_OPTIMIZE_FOR_SIZE=y` builds Rust, \
             where the trap is laid out in line (`patches/rust-trap` 1).\n"
        )
        .unwrap();
        writeln!(
            w,
            "| shape | off | panic | report | panic − off per site | report − off per site | \
             report/panic per site |"
        )
        .unwrap();
        writeln!(w, "|---|---:|---:|---:|---:|---:|---:|").unwrap();
        let rows = s.sites.iter().map(|(shape, t)| (shape.clone(), t));
        let for_size = s
            .sites_for_size
            .iter()
            .map(|(shape, t)| (format!("{shape}, `s`"), t));
        for (shape, t) in rows.chain(for_size) {
            let (panic, report) = (per_site(t.panic, t.off), per_site(t.report, t.off));
            writeln!(
                w,
                "| {shape} | {} | {} | {} | {panic:.1} B | {report:.1} B | {:.3} |",
                t.off,
                t.panic,
                t.report,
                report / panic
            )
            .unwrap();
        }
        writeln!(w).unwrap();
    }
    if !s.alternatives.is_empty() {
        alternatives_markdown(w, s);
    }
    if !s.bloat_o_meter.is_empty() {
        writeln!(
            w,
            "`scripts/bloat-o-meter` of the panic `vmlinux` against the report one:\n\n```\n{}\n```\n",
            s.bloat_o_meter.join("\n")
        )
        .unwrap();
    }
}

/// The per-site table of the lowerings considered (the cover letter's alternatives).
fn alternatives_markdown(w: &mut String, s: &KernelSections) {
    writeln!(
        w,
        "The lowerings considered, per site over `off`, the same functions and command lines: \
         `panic`, today's call of `panic_const_*_overflow`; `call`, report mode without the trap \
         template, so each failed check calls the report entry point with a descriptor and the \
         operands, the ABI of UBSAN's `__ubsan_handle_add_overflow(data, lhs, rhs)`; `bare \
         trap`, report mode with a template that is only a trap of the size of UBSAN's \
         `-fsanitize-trap` (`{}` / `{}`: no location, no operands, no bug-table entry; UBSAN's is \
         fatal, and LLVM treats it as `noreturn`, so it would also fold later checks as `panic` \
         does); `trap`, this series (the trap with the operands' registers and its bug-table \
         entry, which is not `.text`).\n",
        BARE_TRAP_X86_64.trim_end(),
        BARE_TRAP_ARM64.trim_end()
    )
    .unwrap();
    writeln!(w, "| shape | panic | call | bare trap | trap |").unwrap();
    writeln!(w, "|---|---:|---:|---:|---:|").unwrap();
    for (shape, alt) in &s.alternatives {
        let Some(t) = s.sites.get(shape) else {
            continue;
        };
        writeln!(
            w,
            "| {shape} | {:.1} B | {:.1} B | {:.1} B | {:.1} B |",
            per_site(t.panic, t.off),
            per_site(alt.call, t.off),
            per_site(alt.bare_trap, t.off),
            per_site(t.report, t.off)
        )
        .unwrap();
    }
    writeln!(w).unwrap();
}

fn row(w: &mut String, name: &str, t: &Triple) {
    writeln!(
        w,
        "| {name} | {} | {} | {} | {:.4} | {:.4} | {:.4} |",
        t.off,
        t.panic,
        t.report,
        t.report_panic(),
        t.report_off(),
        t.panic_off()
    )
    .unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traps_are_recognized() {
        assert!(is_trap("   17d:      \tud1l\t%eax, %ecx", Arch::X86_64));
        assert!(!is_trap("   17d:      \tud2", Arch::X86_64));
        assert!(is_trap("   1c:      \tbrk\t#0x5021", Arch::Arm64));
        assert!(!is_trap("   1c:      \tbrk\t#0x800", Arch::Arm64));
        assert!(!is_trap("   1c:      \tbrk\t#0x5500", Arch::Arm64));
    }

    #[test]
    fn the_sites_crate_has_one_function_per_site() {
        let src = sites_crate();
        assert_eq!(src.matches("pub fn site_").count(), SITES);
        assert!(src.contains("(a ^ 2) * b"));
        let calls = site_functions(SiteShape::Call);
        assert_eq!(calls.matches("unsafe { sink(r) }").count(), SITES);
        assert!(calls.contains("let r = (a ^ 1) - b;"));
    }

    #[test]
    fn the_trap_template_is_kept_removed_or_replaced() {
        let cmd = "rustc -Coverflow-checks=report -Zoverflow-report-trap=./rust/t.asm x.rs";
        assert_eq!(with_trap_template(cmd, &TrapTemplate::Kernel).unwrap(), cmd);
        assert_eq!(
            with_trap_template(cmd, &TrapTemplate::Without).unwrap(),
            "rustc -Coverflow-checks=report x.rs"
        );
        assert_eq!(
            with_trap_template(cmd, &TrapTemplate::Replaced("/b.S".into())).unwrap(),
            "rustc -Coverflow-checks=report -Zoverflow-report-trap=/b.S x.rs"
        );
        let without = with_trap_template("rustc x.rs", &TrapTemplate::Without).unwrap_err();
        assert!(without.to_string().contains("no `-Zoverflow-report-trap=`"));
    }

    #[test]
    fn the_opt_level_is_replaced_by_s() {
        assert_eq!(
            with_size_opt_level("rustc -Copt-level=2 x.rs").unwrap(),
            "rustc -Copt-level=s x.rs"
        );
        assert!(with_size_opt_level("rustc x.rs").is_err());
    }

    #[test]
    fn call_relocations_name_their_symbol() {
        let x86 = "\t\t000000000001318e:  R_X86_64_PLT32\t_RNvNtNtCs5_4core9panicking11panic_const24panic_const_add_overflow-0x4";
        assert_eq!(
            call_relocation(x86),
            Some("_RNvNtNtCs5_4core9panicking11panic_const24panic_const_add_overflow")
        );
        let arm64 = "\t\t0000000000002744:  R_AARCH64_CALL26\tsym";
        assert_eq!(call_relocation(arm64), Some("sym"));
        assert_eq!(
            call_relocation("\t\t12:  R_X86_64_32S\t.rodata+0xc42e"),
            None
        );
        assert_eq!(call_relocation("   17d:      \tud1l\t%eax, %ecx"), None);
    }

    #[test]
    fn the_kernel_command_line_compiles_the_sites_instead() {
        let saved = "savedcmd_samples/rust/rust_minimal.o := OBJTREE=/b RUST_MODFILE=samples/rust/rust_minimal /t/bin/rustc --edition=2021 -Wmissing_docs -Zcrate-attr='feature(asm_goto)' -Zoverflow-report-trap=./rust/overflow_trap.asm -L ./rust/ --sysroot=/dev/null --out-dir samples/rust/ --emit=dep-info=samples/rust/.rust_minimal.o.d --emit=obj=samples/rust/rust_minimal.o /src/samples/rust/rust_minimal.rs   ; ./tools/objtool/objtool --orc --link samples/rust/rust_minimal.o\n\nsource_samples/rust/rust_minimal.o := /src/samples/rust/rust_minimal.rs\n";
        let cmd = sites_command(
            saved,
            Path::new("/w/s.rs"),
            Path::new("/w/s.o"),
            Path::new("/w"),
        )
        .unwrap();
        assert_eq!(
            cmd,
            "OBJTREE=/b RUST_MODFILE=sites /t/bin/rustc --edition=2021 \
             -Zcrate-attr='feature(asm_goto)' -Zoverflow-report-trap=./rust/overflow_trap.asm \
             -L ./rust/ --sysroot=/dev/null --out-dir /w --emit=obj=/w/s.o /w/s.rs"
        );
        let err = sites_command(
            "savedcmd_x.o := rustc x.rs",
            Path::new("a"),
            Path::new("b"),
            Path::new("c"),
        );
        assert!(err.is_err());
    }
}
