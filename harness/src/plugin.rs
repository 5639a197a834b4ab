//! `plugin`: the LLVM pass plugin of `plugin/` (the overflow check passes that rustc loads with
//! `-Zllvm-plugins=`), built against the system's LLVM 22, which the toolchain links, and its
//! `lit` tests.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};

use crate::ctx::{Ctx, LLVM_CONFIG};
use crate::run::{capture, run_logged, spawn_logged, Lock};

/// The plugin's sources in the repository.
const SOURCE: &str = "plugin";

/// Builds the plugin, unless it is newer than all of its sources, and returns its path:
/// `<work>/plugin/overflow-checks.so`.
pub fn build(ctx: &Ctx) -> Result<PathBuf> {
    let src = ctx.repo.join(SOURCE);
    let mut sources = Vec::new();
    let mut newest = SystemTime::UNIX_EPOCH;
    for entry in fs::read_dir(&src).with_context(|| format!("reading {}", src.display()))? {
        let path = entry?.path();
        let ext = path.extension().and_then(|e| e.to_str());
        if matches!(ext, Some("cpp" | "h")) {
            newest = newest.max(fs::metadata(&path)?.modified()?);
            if ext == Some("cpp") {
                sources.push(path);
            }
        }
    }
    if sources.is_empty() {
        bail!("no C++ sources in {}", src.display());
    }
    sources.sort();
    let out = ctx.work.join("plugin");
    fs::create_dir_all(&out)?;
    let plugin = out.join("overflow-checks.so");
    let built = fs::metadata(&plugin).and_then(|m| m.modified()).ok();
    if built.is_some_and(|t| t >= newest) {
        return Ok(plugin);
    }
    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    let mut flags = Command::new(LLVM_CONFIG);
    flags.arg("--cxxflags");
    let flags = capture(flags, Duration::from_secs(60))
        .context("running llvm-config; run `setup`, which installs llvm-22-dev")?;
    // Written beside and renamed, so that an interrupted build leaves no plugin that looks done.
    let partial = out.join("overflow-checks.so.partial");
    let mut cmd = Command::new("g++");
    cmd.args(["-shared", "-fPIC", "-O2", "-Wall", "-Wextra"])
        .args(flags.split_whitespace())
        .arg("-o")
        .arg(&partial)
        .args(&sources);
    run_logged(
        cmd,
        "building the LLVM pass plugin",
        &ctx.log("plugin-build")?,
        Duration::from_secs(900),
    )?;
    fs::rename(&partial, &plugin)?;
    Ok(plugin)
}

/// Runs `plugin/test` with LLVM's `lit` against the plugin; returns (passed, failed), one per
/// test file, as `lit` counts them.
pub fn tests(ctx: &Ctx) -> Result<(usize, usize)> {
    let plugin = build(ctx)?;
    let bin = Path::new(LLVM_CONFIG).parent().unwrap();
    let mut cmd = Command::new(bin.join("lit"));
    cmd.arg("-v")
        .arg(format!("-Dplugin={}", plugin.display()))
        .arg(format!("-Dllvm_config={LLVM_CONFIG}"))
        .arg(ctx.repo.join(SOURCE).join("test"));
    let log = ctx.log("plugin-tests")?;
    let status = spawn_logged(&mut cmd, "lit plugin/test", &log, Duration::from_secs(600))
        .context("running lit; run `setup`, which installs llvm-22-tools")?;
    let (passed, failed) = lit_counts(&fs::read_to_string(&log)?);
    if !status.success() && failed == 0 {
        bail!(
            "lit failed before running tests ({status}); see {}",
            log.display()
        );
    }
    Ok((passed, failed))
}

/// The `Passed` and `Failed` counts of `lit`'s summary (`  Passed: 4`); an unexpected pass
/// counts as a failure.
fn lit_counts(log: &str) -> (usize, usize) {
    let count = |names: &[&str]| -> usize {
        log.lines()
            .filter_map(|l| l.trim().split_once(':'))
            .filter(|(name, _)| names.contains(name))
            .filter_map(|(_, n)| n.split_whitespace().next()?.parse::<usize>().ok())
            .sum()
    };
    (
        count(&["Passed", "Expectedly Failed"]),
        count(&["Failed", "Unexpectedly Passed", "Unresolved", "Timed Out"]),
    )
}

#[cfg(test)]
mod tests {
    use super::lit_counts;

    #[test]
    fn lit_summary() {
        let log = "PASS: overflow-checks :: pipeline.ll (1 of 4)\n\
                   FAIL: overflow-checks :: guard-counters.ll (2 of 4)\n\n\
                   Testing Time: 0.21s\n\nTotal Discovered Tests: 4\n  Passed: 3 (75.00%)\n  Failed: 1 (25.00%)\n";
        assert_eq!(lit_counts(log), (3, 1));
    }
}
