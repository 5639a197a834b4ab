//! `check`: what a maintainer runs on the kernel series before sending it.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::boot::{self, Boot};
use crate::ctx::{Arch, Ctx, Mode};
use crate::kernel::{self, BuildArgs, TreeArgs};
use crate::patches;
use crate::run::{capture, spawn_logged, Lock};
use crate::toolchain;

const MAKE_TIMEOUT: Duration = Duration::from_secs(75 * 60);

#[derive(clap::Args, Default)]
pub struct Args {
    /// Skip building and booting each patch of the series on its own.
    #[arg(long, conflicts_with = "bisect_only")]
    pub no_bisect: bool,
    /// Only build and boot each patch of the series on its own (after a full `check` of the
    /// same series, when only the bisect is left).
    #[arg(long)]
    pub bisect_only: bool,
    /// Start the bisect at this patch of the stack (1-based, separators not counted), after a
    /// run that passed the patches before it at the same commits: saves rebuilding them.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub bisect_from: u32,
}

#[derive(Default)]
struct Checks {
    rows: Vec<(String, bool, String)>,
}

impl Checks {
    fn add(&mut self, name: impl Into<String>, result: Result<String>) {
        let name = name.into();
        let (ok, detail) = match result {
            Ok(detail) => (true, detail),
            Err(err) => (false, format!("{err:#}")),
        };
        eprintln!(
            "== {name}: {} {}",
            if ok { "ok" } else { "FAILED" },
            first_line(&detail)
        );
        self.rows.push((name, ok, detail));
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let src = kernel::tree(ctx, &TreeArgs::default())?;
    let mut series = Vec::new();
    for dir in patches::stack(&ctx.repo, patches::Which::Linux) {
        series.extend(patches::read_series(&dir)?);
    }
    if series.is_empty() {
        bail!("patches/linux/series is empty: nothing to check");
    }
    let mut checks = Checks::default();
    if args.bisect_only {
        let toolchain = toolchain::run(ctx, &toolchain::Args { tools: true })?;
        bisect(
            ctx,
            &src,
            &ctx.make_vars(&toolchain),
            args.bisect_from,
            &mut checks,
        )?;
        return summary(&checks);
    }

    for patch in &series {
        let name = patch
            .strip_prefix(ctx.repo.join("patches"))
            .unwrap_or(patch)
            .display()
            .to_string();
        checks.add(
            format!("checkpatch --strict {name}"),
            checkpatch(ctx, &src, patch),
        );
    }

    let toolchain = toolchain::run(ctx, &toolchain::Args { tools: true })?;
    let vars = ctx.make_vars(&toolchain);
    let build = BuildArgs {
        arch: Arch::X86_64,
        mode: Mode::Report,
    };
    let out = kernel::build(ctx, &build)?;
    let touched = touched_files(&series)?;
    checks.add(
        "make rustfmtcheck",
        make_check(ctx, &src, &out, &vars, &["rustfmtcheck"], "rustfmtcheck"),
    );
    checks.add(
        "make rustdoc",
        make_check(ctx, &src, &out, &vars, &["rustdoc"], "rustdoc"),
    );
    checks.add("make CLIPPY=1", clippy(ctx, &src, &vars, &touched));

    let panic_on_warn = boot::Args {
        arch: Arch::X86_64,
        mode: Mode::Report,
        cmdline: vec!["panic_on_warn=1".into()],
        expect_panic: true,
        ..Default::default()
    };
    checks.add(
        "boot with panic_on_warn=1 panics at the report",
        boot::boot_build(ctx, &out, &panic_on_warn, "check-panic-on-warn")
            .and_then(|b| panic_at_report(&b)),
    );
    checks.add(
        "rustc-web 1.96 (no report flag): builds and boots",
        without_flag(ctx, &src),
    );
    if !args.no_bisect {
        bisect(ctx, &src, &vars, args.bisect_from, &mut checks)?;
    }
    summary(&checks)
}

/// Prints every check's result, and fails if one failed.
fn summary(checks: &Checks) -> Result<()> {
    eprintln!("\nSummary:");
    for (name, ok, detail) in &checks.rows {
        eprintln!(
            "  {:<60} {}  {}",
            name,
            if *ok { "ok    " } else { "FAILED" },
            first_line(detail)
        );
    }
    let passed = checks.rows.iter().filter(|r| r.1).count();
    let failed = checks.rows.len() - passed;
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        bail!("{failed} check(s) failed");
    }
    Ok(())
}

fn checkpatch(ctx: &Ctx, src: &Path, patch: &Path) -> Result<String> {
    let mut cmd = Command::new("perl");
    // checkpatch runs scripts/spdxcheck.py with `python3` from PATH; Debian's has the `ply` and
    // `git` modules that `setup` installs (python3-ply, python3-git), a pyenv one may not.
    let path = std::env::var("PATH").unwrap_or_default();
    cmd.current_dir(src)
        .env("PATH", format!("/usr/bin:/bin:{path}"))
        .args(["scripts/checkpatch.pl", "--strict", "--no-summary-file"])
        .arg(patch);
    let log = ctx.log(&format!(
        "checkpatch-{}",
        patch.file_stem().unwrap().to_string_lossy()
    ))?;
    spawn_logged(&mut cmd, "checkpatch", &log, Duration::from_secs(600))?;
    let text = fs::read_to_string(&log)?;
    if text.contains("Traceback (most recent call last)") {
        bail!(
            "a script that checkpatch runs failed; see {}",
            log.display()
        );
    }
    let total = text
        .lines()
        .find(|l| l.starts_with("total: "))
        .with_context(|| format!("checkpatch printed no total; see {}", log.display()))?;
    if !total.starts_with("total: 0 errors, 0 warnings, 0 checks") {
        bail!("{total} (see {})", log.display());
    }
    Ok(total.to_string())
}

fn make_check(
    ctx: &Ctx,
    src: &Path,
    out: &Path,
    vars: &[String],
    targets: &[&str],
    label: &str,
) -> Result<String> {
    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    let mut cmd = kernel::make(src, out, Arch::X86_64, vars, targets);
    let log = ctx.log(&format!("check-{label}"))?;
    let status = spawn_logged(
        &mut cmd,
        &format!("make {}", targets.join(" ")),
        &log,
        MAKE_TIMEOUT,
    )?;
    if !status.success() {
        bail!(
            "make {} failed ({status}); see {}",
            targets.join(" "),
            log.display()
        );
    }
    Ok(format!("log: {}", log.display()))
}

/// Configures and builds an x86_64 kernel, holding the heavy lock only while `make` runs.
fn make_x86_64(
    ctx: &Ctx,
    src: &Path,
    out: &Path,
    vars: &[String],
    fragment: &str,
    label: &str,
) -> Result<()> {
    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    kernel::make_kernel(
        ctx,
        src,
        out,
        Arch::X86_64,
        vars,
        fragment,
        kernel::Base::AllNo,
        label,
    )
}

/// The files the series adds or changes.
fn touched_files(series: &[std::path::PathBuf]) -> Result<Vec<String>> {
    let mut files = Vec::new();
    for patch in series {
        let text = fs::read_to_string(patch)?;
        files.extend(
            text.lines()
                .filter_map(|l| l.strip_prefix("+++ b/"))
                .map(str::to_string),
        );
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// Clippy warnings in `log` that point into `files`, as `file:line: message`.
pub fn clippy_warnings(log: &str, files: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    let mut message = "";
    for line in log.lines() {
        if let Some(m) = line
            .strip_prefix("warning: ")
            .or_else(|| line.strip_prefix("error: "))
        {
            message = m;
        } else if let Some(at) = line.trim_start().strip_prefix("--> ") {
            // Relative to the source tree, or absolute when the build has `O=`.
            let path = at.split(':').next().unwrap_or_default();
            if files
                .iter()
                .any(|f| path == f || path.ends_with(&format!("/{f}")))
            {
                found.push(format!("{at}: {message}"));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Builds the report-mode kernel with `CLIPPY=1` in its own directory, so that the normal
/// build keeps its objects.
fn clippy(ctx: &Ctx, src: &Path, vars: &[String], touched: &[String]) -> Result<String> {
    let out = ctx.work.join("check/clippy");
    let mut vars = vars.to_vec();
    vars.push("CLIPPY=1".into());
    let fragment = fs::read_to_string(ctx.build_dir(Arch::X86_64, Mode::Report).join(".config"))?;
    make_x86_64(ctx, src, &out, &vars, &fragment, "check-clippy")?;
    let log = ctx.work.join("logs/check-clippy.log");
    let warnings = clippy_warnings(&fs::read_to_string(&log)?, touched);
    if !warnings.is_empty() {
        bail!(
            "{} clippy warning(s) in the series' files:\n{}",
            warnings.len(),
            warnings.join("\n")
        );
    }
    Ok("no clippy warnings in the series' files".into())
}

fn panic_at_report(boot: &Boot) -> Result<String> {
    let reason = boot.console.panic.as_deref().unwrap_or_default();
    if !reason.contains("panic_on_warn") {
        bail!("the kernel panicked for another reason: {reason}");
    }
    let Some(report) = boot.console.warns.first() else {
        bail!("the kernel panicked without printing the WARN report first");
    };
    Ok(format!("panic after the report for {}", report.site()))
}

/// Builds and boots with Debian's rustc-web 1.96, which has no `-Coverflow-checks=report`:
/// `RUST_OVERFLOW_REPORT` must be unavailable and the kernel must still work.
fn without_flag(ctx: &Ctx, src: &Path) -> Result<String> {
    let mut version = Command::new("/usr/bin/rustc");
    version.arg("--version");
    let version = capture(version, Duration::from_secs(60))
        .context("Debian's rustc-web is missing; run `setup`")?;
    let vars = vec![
        format!("LLVM={}", crate::ctx::LLVM_SUFFIX),
        "RUSTC=/usr/bin/rustc".to_string(),
        "RUSTDOC=/usr/bin/rustdoc".to_string(),
        format!("RUST_LIB_SRC={}/library", crate::ctx::RUSTC_SRC),
        format!("BINDGEN={}", ctx.bindgen().display()),
    ];
    let configs = ctx.repo.join("configs/kernel");
    let fragment = fs::read_to_string(configs.join("base.config"))?
        + &fs::read_to_string(configs.join("x86_64.config"))?
        + "CONFIG_RUST_OVERFLOW_CHECKS=y\n";
    let out = ctx.work.join("check/rustc-web");
    make_x86_64(ctx, src, &out, &vars, &fragment, "check-rustc-web")?;
    let config = fs::read_to_string(out.join(".config"))?;
    for symbol in [
        "CONFIG_RUSTC_HAS_OVERFLOW_REPORT",
        "CONFIG_RUST_OVERFLOW_REPORT",
    ] {
        if config.lines().any(|l| l == format!("{symbol}=y")) {
            bail!("{symbol}=y with {}", version.trim());
        }
    }
    let args = boot::Args {
        arch: Arch::X86_64,
        mode: Mode::Panic,
        ..Default::default()
    };
    boot::boot_build(ctx, &out, &args, "check-rustc-web")?;
    Ok(format!(
        "{}: report mode unavailable, kernel boots",
        version.trim()
    ))
}

/// Builds and boots every patch of the series on its own, in a separate worktree, and runs
/// `make rustfmtcheck` on it.
fn bisect(ctx: &Ctx, src: &Path, vars: &[String], from: u32, checks: &mut Checks) -> Result<()> {
    let tree = ctx.work.join("check/bisect-src");
    let base = patches::base_commit(src)?;
    // The separators between the series of the stack change nothing: not built.
    let commits = patches::patch_commits(src)?;
    if from as usize > commits.len() {
        bail!(
            "--bisect-from {from}: the stack has {} patches",
            commits.len()
        );
    }
    if !tree.exists() {
        let mut add = patches::git(src);
        add.args(["worktree", "add", "--detach"])
            .arg(&tree)
            .arg(&base);
        capture(add, Duration::from_secs(1800))?;
    }
    let configs = ctx.repo.join("configs/kernel");
    let base_fragment = fs::read_to_string(configs.join("base.config"))?
        + &fs::read_to_string(configs.join("x86_64.config"))?;
    for (i, (commit, subject)) in commits.iter().enumerate().skip(from as usize - 1) {
        let mut checkout = patches::git(&tree);
        checkout.args(["checkout", "-q", "--detach", commit]);
        capture(checkout, Duration::from_secs(600))?;
        let mode = if kernel::has_kconfig(&tree, "RUST_OVERFLOW_REPORT") {
            Mode::Report
        } else {
            Mode::Panic
        };
        let mut fragment = base_fragment.clone() + mode.kconfig();
        if mode == Mode::Report && kernel::has_kconfig(&tree, "SAMPLE_RUST_OVERFLOW_REPORT") {
            fragment += &fs::read_to_string(configs.join("demo-report.config"))?;
        }
        let out = ctx.work.join("check/bisect-build");
        let label = format!("check-bisect-{:02}", i + 1);
        let result = (|| {
            make_x86_64(ctx, &tree, &out, vars, &fragment, &label)?;
            let args = boot::Args {
                arch: Arch::X86_64,
                mode,
                ..Default::default()
            };
            let boot = boot::boot_build(ctx, &out, &args, &label)?;
            make_check(ctx, &tree, &out, vars, &["rustfmtcheck"], &label)?;
            Ok(format!(
                "{mode} mode, {} WARN report(s), rustfmtcheck clean",
                boot.console.warns.len()
            ))
        })();
        checks.add(
            format!("patch {}: builds and boots ({subject})", i + 1),
            result,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::clippy_warnings;

    #[test]
    fn clippy_warnings_only_in_given_files() {
        let log = "warning: unneeded `return` statement\n  --> rust/kernel/overflow.rs:10:5\n\
                   warning: old\n  --> rust/kernel/str.rs:3:1\n\
                   warning: simplify\n  --> /src/linux/rust/kernel/overflow.rs:388:8\n";
        let files = vec!["rust/kernel/overflow.rs".to_string()];
        assert_eq!(
            clippy_warnings(log, &files),
            [
                "/src/linux/rust/kernel/overflow.rs:388:8: simplify",
                "rust/kernel/overflow.rs:10:5: unneeded `return` statement",
            ]
        );
    }
}
