//! `test`: everything the toolchain and the series support, ending with `N passed, N failed`.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::ValueEnum;

use crate::boot;
use crate::boot_checks;
use crate::conformance;
use crate::ctx::{Arch, Ctx, Mode};
use crate::kernel::{self, BuildArgs, TreeArgs};
use crate::kunit::{self, KunitArch};
use crate::plugin;
use crate::run::{fmt_duration, libtest_counts, spawn_logged};
use crate::setup;
use crate::toolchain;

#[derive(clap::Args, Default)]
pub struct Args {
    /// Skip `setup` (for machines prepared by hand).
    #[arg(long)]
    pub no_setup: bool,
    /// Only run KUnit on these architectures (default: x86_64 and arm64, the two that trap).
    #[arg(long, value_enum, conflicts_with = "all_arches")]
    pub arch: Vec<KunitArch>,
    /// Run KUnit on all five architectures: also UML, 32-bit ARM and riscv64, where every
    /// report is a call (three more kernel builds, about 12 minutes each from cold on a slow
    /// machine), and the doctests on arm64 too (by default they run on x86_64 only); run it
    /// before resolving a change to `patches/` (CI runs the default two).
    #[arg(long)]
    pub all_arches: bool,
}

/// The architectures `test` runs KUnit on by default: x86_64 on the demo kernel, arm64 through
/// kunit.py. A cold run of all five does not fit CI's time on a slow machine of this kind.
const DEFAULT_ARCHES: &[KunitArch] = &[KunitArch::X86_64, KunitArch::Arm64];

/// One line of the final table.
struct Outcome {
    step: String,
    passed: usize,
    failed: usize,
    note: String,
}

#[derive(Default)]
struct Report {
    outcomes: Vec<Outcome>,
    /// How long each step took, in order, for the summary.
    timings: Vec<(String, Duration)>,
}

impl Report {
    fn add(&mut self, step: &str, passed: usize, failed: usize, note: impl Into<String>) {
        let note = note.into();
        eprintln!("== {step}: {passed} passed, {failed} failed {note}");
        self.outcomes.push(Outcome {
            step: step.into(),
            passed,
            failed,
            note,
        });
    }

    /// Runs one step and records how long it took.
    fn timed<T>(&mut self, step: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        let start = Instant::now();
        let out = f(self);
        let took = start.elapsed();
        eprintln!("== {step}: took {}", fmt_duration(took));
        self.timings.push((step.to_string(), took));
        out
    }

    /// Records a step that could not produce results as one failure.
    fn error(&mut self, step: &str, err: anyhow::Error) {
        eprintln!("error in {step}: {err:#}");
        self.add(step, 0, 1, format!("(error: {})", first_line(&err)));
    }
}

fn first_line(err: &anyhow::Error) -> String {
    format!("{err:#}")
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(120)
        .collect()
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let start = Instant::now();
    let mut report = Report::default();

    report.timed("cargo test (harness)", |report| match cargo_test(ctx) {
        Ok((p, f)) => report.add("cargo test (harness)", p, f, ""),
        Err(e) => report.error("cargo test (harness)", e),
    });

    if !args.no_setup {
        report
            .timed("setup", |_| setup::run(ctx))
            .context("setup failed; nothing else can run")?;
    }
    let toolchain = report
        .timed("toolchain", |_| {
            toolchain::run(ctx, &toolchain::Args::default())
        })
        .context("the toolchain build failed; nothing else can run")?;
    let report_mode = toolchain::supports_report(&toolchain);
    let step = "compiletest (rustc series)";
    report.timed(step, |report| match toolchain::compiletest(ctx) {
        Ok((p, f)) => report.add(step, p, f, ""),
        Err(e) => report.error(step, e),
    });
    let step = "lit tests of the LLVM pass plugin (plugin/test)";
    report.timed(step, |report| match plugin::tests(ctx) {
        Ok((p, f)) => report.add(step, p, f, ""),
        Err(e) => report.error(step, e),
    });
    let step = "conformance (rustc)";
    if report_mode {
        report.timed(step, |report| match conformance::run(ctx) {
            Ok(s) => report.add(step, s.passed, s.failed, ""),
            Err(e) => report.error(step, e),
        });
    } else {
        report.add(
            step,
            0,
            0,
            "(skipped: the toolchain has no report mode yet)",
        );
    }

    let src = report
        .timed("kernel tree", |_| kernel::tree(ctx, &TreeArgs::default()))
        .context("preparing the kernel tree failed")?;
    let mode = if report_mode && kernel::has_kconfig(&src, "RUST_OVERFLOW_REPORT") {
        Mode::Report
    } else {
        Mode::Panic
    };
    let arches = if args.all_arches {
        KunitArch::value_variants().to_vec()
    } else if args.arch.is_empty() {
        DEFAULT_ARCHES.to_vec()
    } else {
        args.arch.clone()
    };
    for arch in arches {
        let step = format!("kunit {arch} {mode}");
        report.timed(&step, |report| {
            match kunit_suites(ctx, &src, arch, mode, args.all_arches) {
                Ok(suites) => {
                    for s in &suites {
                        report.add(
                            &format!("{step}: {}", s.name),
                            s.passed,
                            s.failed,
                            format!("({} skipped)", s.skipped),
                        );
                    }
                }
                Err(e) => report.error(&step, e),
            }
        });
    }

    let step = "boot checks x86_64 report (sample, panic_on_warn, KUnit rerun, module)";
    if mode == Mode::Report && kernel::has_kconfig(&src, "SAMPLE_RUST_OVERFLOW_REPORT") {
        report.timed(step, |report| match boot_checks(ctx, &src) {
            Ok((p, f)) => report.add(step, p, f, ""),
            Err(e) => report.error(step, e),
        });
    } else {
        report.add(step, 0, 0, "(skipped: the series has no sample yet)");
    }

    eprintln!("\nTime per step:");
    for (step, took) in &report.timings {
        eprintln!("  {step:<60} {:>8}", fmt_duration(*took));
    }
    eprintln!("\nSummary ({} in total):", fmt_duration(start.elapsed()));
    for o in &report.outcomes {
        eprintln!(
            "  {:<60} {:>5} passed {:>3} failed {}",
            o.step, o.passed, o.failed, o.note
        );
    }
    let passed: usize = report.outcomes.iter().map(|o| o.passed).sum();
    let failed: usize = report.outcomes.iter().map(|o| o.failed).sum();
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        anyhow::bail!("{failed} check(s) failed");
    }
    Ok(())
}

/// KUnit on one architecture: kunit.py's own build and QEMU run, except x86_64 in report mode,
/// where the demo kernel (every Rust KUnit suite built in, and the sample) is booted and its
/// console parsed by `kunit.py parse`, so that one x86_64 build serves KUnit and the boot
/// checks. `cargo run -- kunit --arch x86_64` still runs kunit.py's own build.
fn kunit_suites(
    ctx: &Ctx,
    src: &Path,
    arch: KunitArch,
    mode: Mode,
    all_arches: bool,
) -> Result<Vec<kunit::Suite>> {
    if arch == KunitArch::X86_64
        && mode == Mode::Report
        && kernel::has_kconfig(src, "SAMPLE_RUST_OVERFLOW_REPORT")
    {
        let boot = demo_kernel(ctx)?;
        return kunit::parse_boot_log(ctx, "x86_64-report-demo", &boot.console_before_dmesg()?);
    }
    // The doctests are the same examples on every target and run on x86_64; elsewhere they
    // hold one of the two cores for minutes, so only `--all-arches` builds them there.
    let no_doctests = !all_arches;
    kunit::run(
        ctx,
        &kunit::Args {
            arch,
            mode,
            no_doctests,
        },
    )
}

/// Runs the harness's own tests; returns (passed, failed) from libtest's result lines.
fn cargo_test(ctx: &Ctx) -> Result<(usize, usize)> {
    let mut cmd = Command::new("cargo");
    cmd.current_dir(&ctx.repo)
        .args(["test", "--release", "--workspace"]);
    let log = ctx.log("cargo-test")?;
    let status = spawn_logged(&mut cmd, "cargo test", &log, Duration::from_secs(1800))?;
    let (passed, mut failed) = libtest_counts(&fs::read_to_string(&log)?);
    if !status.success() && failed == 0 {
        failed = 1;
    }
    Ok((passed, failed))
}

/// Builds the x86_64 report-mode kernel with the sample module.
pub fn build_demo(ctx: &Ctx) -> Result<std::path::PathBuf> {
    kernel::build(
        ctx,
        &BuildArgs {
            arch: Arch::X86_64,
            mode: Mode::Report,
        },
    )
}

/// Builds the x86_64 report-mode kernel with the sample module and boots it.
pub fn demo_kernel(ctx: &Ctx) -> Result<boot::Boot> {
    build_demo(ctx)?;
    boot::run(
        ctx,
        &boot::Args {
            arch: Arch::X86_64,
            mode: Mode::Report,
            ..Default::default()
        },
    )
}

/// Builds the demo kernel and runs the boot checks of `boot_checks` on it.
fn boot_checks(ctx: &Ctx, src: &std::path::Path) -> Result<(usize, usize)> {
    build_demo(ctx)?;
    let checks = boot_checks::run(ctx, src)?;
    Ok((checks.passed, checks.failed))
}
