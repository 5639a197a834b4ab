//! `test`: everything the toolchain and the series support, ending with `N passed, N failed`.

use std::fs;
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
use crate::run::{fmt_duration, libtest_counts, spawn_logged};
use crate::setup;
use crate::toolchain;

#[derive(clap::Args, Default)]
pub struct Args {
    /// Skip `setup` (for machines prepared by hand).
    #[arg(long)]
    pub no_setup: bool,
    /// Only run KUnit on these architectures (default: all five).
    #[arg(long, value_enum)]
    pub arch: Vec<KunitArch>,
}

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

    match cargo_test(ctx) {
        Ok((p, f)) => report.add("cargo test (harness)", p, f, ""),
        Err(e) => report.error("cargo test (harness)", e),
    }

    if !args.no_setup {
        setup::run(ctx).context("setup failed; nothing else can run")?;
    }
    let toolchain = toolchain::run(ctx, &toolchain::Args::default())
        .context("the toolchain build failed; nothing else can run")?;
    let report_mode = toolchain::supports_report(&toolchain);
    match toolchain::compiletest(ctx) {
        Ok((p, f)) => report.add("compiletest (rustc series)", p, f, ""),
        Err(e) => report.error("compiletest (rustc series)", e),
    }
    match toolchain::llvm_ir_tests(ctx) {
        Ok((p, f)) => report.add("IR tests of the LLVM passes (opt + FileCheck)", p, f, ""),
        Err(e) => report.error("IR tests of the LLVM passes (opt + FileCheck)", e),
    }
    if report_mode {
        match conformance::run(ctx) {
            Ok(s) => report.add("conformance (rustc)", s.passed, s.failed, ""),
            Err(e) => report.error("conformance (rustc)", e),
        }
    } else {
        report.add(
            "conformance (rustc)",
            0,
            0,
            "(skipped: the toolchain has no report mode yet)",
        );
    }

    let src =
        kernel::tree(ctx, &TreeArgs::default()).context("preparing the kernel tree failed")?;
    let mode = if report_mode && kernel::has_kconfig(&src, "RUST_OVERFLOW_REPORT") {
        Mode::Report
    } else {
        Mode::Panic
    };
    let arches = if args.arch.is_empty() {
        KunitArch::value_variants().to_vec()
    } else {
        args.arch.clone()
    };
    for arch in arches {
        let step = format!("kunit {arch} {mode}");
        match kunit::run(ctx, &kunit::Args { arch, mode }) {
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
    }

    let step = "boot checks x86_64 report (sample, panic_on_warn, KUnit rerun, module)";
    if mode == Mode::Report && kernel::has_kconfig(&src, "SAMPLE_RUST_OVERFLOW_REPORT") {
        match boot_checks(ctx, &src) {
            Ok((p, f)) => report.add(step, p, f, ""),
            Err(e) => report.error(step, e),
        }
    } else {
        report.add(step, 0, 0, "(skipped: the series has no sample yet)");
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
