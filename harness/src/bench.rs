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
    geomean, mode_flags, parse_callgrind, rust_objects, section_sizes, text_size, Triple,
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
    /// `-Zmerge-overflow-reports` too (rustc patch 8). The kernel has no vector registers, so
    /// merging would change nothing there: its builds are the same either way.
    #[arg(long)]
    pub merge_reports: bool,
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
    /// The last two lines of `scripts/bloat-o-meter` of the panic `vmlinux` against the report
    /// one: functions added, removed, grown and shrunk, and the total.
    bloat_o_meter: Vec<String>,
}

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
    let source = ctx.repo.join("bench/workloads.rs");
    let mut outputs = BTreeMap::new();
    for mode in MODES {
        let exe = dir.join(format!("workloads-{mode}"));
        let exe_flags = ["-Copt-level=2", "-o"];
        compile(&rustc, (mode, merge), &exe_flags, &exe, &source)?;
        for &name in WORKLOADS {
            let (instructions, output) = callgrind(&exe, name)?;
            eprintln!("  {name} {mode}: {instructions} instructions");
            out.userspace
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

/// A `no_std` crate of `SITES` functions, each with one checked `+`, `-` or `*`.
fn sites_crate() -> String {
    let mut s =
        String::from("// Generated by `bench`: one checked operation per function.\n#![no_std]\n");
    for i in 0..SITES {
        let op = ["+", "-", "*"][i % 3];
        writeln!(
            s,
            "#[unsafe(no_mangle)]\npub fn site_{i}(a: u32, b: u32) -> u32 {{\n    (a ^ {i}) {op} b\n}}"
        )
        .unwrap();
    }
    s
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
        let mut fragment = String::new();
        for f in [
            "kernel/base.config",
            &format!("kernel/{arch}.config"),
            "kunit/rust.kunitconfig",
        ] {
            fragment += &fs::read_to_string(ctx.repo.join("configs").join(f))?;
        }
        fragment += mode.kconfig();
        {
            let _lock = Lock::acquire(&ctx.heavy_lock())?;
            kernel::make_kernel(
                ctx,
                &src,
                &out,
                arch,
                &ctx.make_vars(toolchain),
                &fragment,
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
            if mode == Mode::Report {
                sections.traps += count_traps(&obj, arch)?;
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

/// The failed checks of `obj` that trap: `ud1` on x86_64, `brk` in 0x5000-0x53ff on arm64.
fn count_traps(obj: &Path, arch: Arch) -> Result<u64> {
    let mut cmd = Command::new("llvm-objdump-22");
    cmd.arg("-d").arg("--no-show-raw-insn").arg(obj);
    let listing = capture(cmd, Duration::from_secs(300))?;
    Ok(listing.lines().filter(|l| is_trap(l, arch)).count() as u64)
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

    s
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
    if !s.bloat_o_meter.is_empty() {
        writeln!(
            w,
            "`scripts/bloat-o-meter` of the panic `vmlinux` against the report one:\n\n```\n{}\n```\n",
            s.bloat_o_meter.join("\n")
        )
        .unwrap();
    }
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
    }
}
