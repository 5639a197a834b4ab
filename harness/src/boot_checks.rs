//! Boot checks of the x86_64 report-mode kernel: the sample's report, a reload, `panic_on_warn`,
//! the KUnit suite run a second time in one boot, and a module built outside the tree.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::boot::{self, Boot};
use crate::ctx::{Arch, Ctx, Mode};
use crate::run::Lock;
use crate::warn::WarnReport;

pub const SAMPLE: &str = "samples/rust/rust_overflow_report.rs";
const MODULE: &str = "rust_overflow_report";

/// The overflow-report KUnit suite, and the file whose `#[test]` functions are its tests.
const SUITE: &str = "rust_overflow_report";
const SUITE_SOURCE: &str = "rust/kernel/overflow.rs";

/// The test results in a suite's KTAP log: `(name, passed)` for each indented `ok N name` or
/// `not ok N name` line (skipped tests count as passed, as kunit.py counts them).
fn kunit_results(lines: &[&str]) -> Vec<(String, bool)> {
    lines
        .iter()
        .filter(|l| l.starts_with(char::is_whitespace))
        .filter_map(|l| {
            let l = l.trim_start();
            let (ok, rest) = match l.strip_prefix("not ok ") {
                Some(rest) => (false, rest),
                None => (true, l.strip_prefix("ok ")?),
            };
            let name = rest.split_whitespace().nth(1)?;
            Some((name.to_string(), ok))
        })
        .collect()
}

/// The out-of-tree module in `harness/oot`, what it reports and what it logs.
const OOT: &str = "overflow_oot";
const OOT_MESSAGES: &[&str] = &[
    "attempt to add with overflow: 200_u8 + 100_u8",
    "attempt to subtract with overflow: -32768_i16 - 1_i16",
    "attempt to multiply with overflow: 70000_u32 * 70000_u32",
    "attempt to negate with overflow: -(-9223372036854775808_i64)",
    "attempt to shift left with overflow: 1_u64 << 70_u32",
    "attempt to add with overflow: 0xffffffffffffffffffffffffffffffff_u128 + 2_u128",
];
const OOT_WRAPPED: &str =
    "wrapped: add 44 sub 32767 mul 605032704 neg -9223372036854775808 shl 64 wide 1";

/// Builds `harness/oot` with `make M=` against the x86_64 report-mode build, in a copy in the
/// work directory; returns the module file.
fn build_oot(ctx: &Ctx) -> Result<PathBuf> {
    let out = crate::kernel::completed_build(ctx, Arch::X86_64, Mode::Report)?;
    let dir = ctx.work.join("oot");
    let toolchain = crate::kernel::current_toolchain(ctx)?;
    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    crate::kernel::build_external_modules(
        ctx,
        &toolchain,
        &out,
        Arch::X86_64,
        &ctx.repo.join("harness/oot"),
        &dir,
        "oot-build",
    )?;
    Ok(dir.join(format!("{OOT}.ko")))
}

/// Shell functions for the guest: `reload` unloads the sample and loads it again.
const HELPERS: &str = r#"
reload() {
    rmmod rust_overflow_report
    insmod /modules/rust_overflow_report.ko || echo "overflow-harness: insmod failed"
}
"#;

/// Counts checks and says which failed.
#[derive(Default)]
pub struct Checks {
    pub passed: usize,
    pub failed: usize,
}

impl Checks {
    fn check(&mut self, what: &str, ok: bool) {
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
            eprintln!("boot check FAILED: {what}");
        }
    }
}

/// What one boot printed, with the helpers to check it.
struct Outcome {
    boot: Boot,
    console: String,
}

impl Outcome {
    /// The lines that `show STEP` printed, without their prefix.
    fn step(&self, step: &str) -> Vec<&str> {
        let prefix = format!("overflow-harness: {step}: ");
        self.console
            .lines()
            .filter_map(|l| l.trim_end_matches('\r').strip_prefix(&prefix))
            .collect()
    }

    fn sample_warns(&self) -> usize {
        self.boot
            .console
            .warns
            .iter()
            .filter(|w| w.file == SAMPLE)
            .count()
    }

    /// How many lines of the kernel log contain `needle`. The console has most kernel lines
    /// twice, as printed and in the `dmesg` dump, so this counts in the dump.
    fn count(&self, needle: &str) -> usize {
        self.boot
            .dmesg
            .lines()
            .filter(|l| l.contains(needle))
            .count()
    }
}

fn boot_with(ctx: &Ctx, label: &str, cmdline: &[&str], script: &str) -> Result<Outcome> {
    boot_with_args(
        ctx,
        label,
        boot::Args {
            cmdline: cmdline.iter().map(|s| s.to_string()).collect(),
            script: Some(format!("{HELPERS}\n{script}")),
            ..Default::default()
        },
    )
}

/// Boots the built x86_64 report-mode kernel with `args` (whose architecture and mode it sets).
fn boot_with_args(ctx: &Ctx, label: &str, args: boot::Args) -> Result<Outcome> {
    // Of the Rust KUnit suites built into the kernel, only the overflow-report suite runs at
    // these boots: the `kunit` step of `test` runs them all on this kernel.
    let mut cmdline = vec![format!("kunit.filter_glob={SUITE}")];
    cmdline.extend(args.cmdline);
    let args = boot::Args {
        arch: Arch::X86_64,
        mode: Mode::Report,
        cmdline,
        ..args
    };
    let out = crate::kernel::completed_build(ctx, Arch::X86_64, Mode::Report)?;
    let boot = boot::boot_build(ctx, &out, &args, &format!("boot-x86_64-report-{label}"))?;
    let console = fs::read_to_string(&boot.console_log)?;
    Ok(Outcome { boot, console })
}

/// Runs the four boots (the sample loaded twice, `panic_on_warn`, the KUnit suite run again,
/// a module built outside the tree) on the built x86_64 report-mode kernel and checks what they
/// printed.
pub fn run(ctx: &Ctx, src: &Path) -> Result<Checks> {
    let (line, column) = assignment_site(&fs::read_to_string(src.join(SAMPLE))?, "a + b")
        .with_context(|| {
            format!("{SAMPLE} has no single `= a + b;` to check the report against")
        })?;
    let site = format!("{SAMPLE}:{line}:{column}");
    let message = "attempt to add with overflow: 200_u8 + 100_u8";
    let mut checks = Checks::default();

    // 1. The sample, loaded at boot and again: a reloaded module has fresh sites, so its
    //    overflow is reported again, and the module goes on with the wrapped value each time.
    let sample = boot_with(ctx, "sample", &[], "reload\n")?;
    let first = sample.boot.console.warns.iter().find(|w| w.file == SAMPLE);
    checks.check(
        &format!(
            "the first load reports the sample's overflow at {site}, with the column, the \
             operation and the operands, as a WARN of the sample's function (not the \
             handler's) with an end-of-trace marker: {first:?}"
        ),
        first.is_some_and(|w| {
            w.line == line
                && w.column == Some(column)
                && w.message.as_deref() == Some(message)
                && w.caller.as_deref().is_some_and(|c| {
                    c.contains("Module4init") && c.ends_with(&format!("[{MODULE}]"))
                })
                && w.complete
        }),
    );
    checks.check(
        "a reload reports the sample's site again, and both loads continue with 44",
        sample.sample_warns() == 2
            && sample.count("still running, 200 + 100 wrapped to 44") == 2
            && !sample.console.contains("overflow-harness: insmod failed"),
    );

    // 2. `panic_on_warn=1`: the kernel's knob turns the report into a panic at the site. The
    //    kernel dies before the guest script dumps dmesg, so this reads the console.
    let panic = boot_with_args(
        ctx,
        "panic-on-warn",
        boot::Args {
            cmdline: vec!["panic_on_warn=1".into()],
            expect_panic: true,
            ..Default::default()
        },
    )?;
    let reason = panic.boot.console.panic.as_deref().unwrap_or_default();
    checks.check(
        &format!(
            "`panic_on_warn=1`: the load panics after reporting the overflow at the site: \
             {reason}"
        ),
        reason.contains("panic_on_warn")
            && panic.boot.console.warns.iter().any(|w| {
                w.file == SAMPLE && w.line == line && w.message.as_deref() == Some(message)
            })
            && !panic.console.contains("still running"),
    );

    // 3. The KUnit suite, built into the demo kernel, ran at boot; run it again through debugfs.
    //    Both runs must pass every test: a suppressed report leaves its site unreported.
    let kunit = boot_with(
        ctx,
        "kunit-rerun",
        &[],
        &format!(
            r#"
R=/sys/kernel/debug/kunit/{SUITE}
sed "s/^/overflow-harness: kunit-1: /" $R/results
echo 1 > $R/run
sed "s/^/overflow-harness: kunit-2: /" $R/results
"#
        ),
    )?;
    let tests = fs::read_to_string(src.join(SUITE_SOURCE))?
        .matches("#[test]")
        .count();
    for run in ["kunit-1", "kunit-2"] {
        let results = kunit_results(&kunit.step(run));
        let passed = results.iter().filter(|(_, ok)| *ok).count();
        checks.check(
            &format!(
                "{SUITE}, run {} in one boot: {} tests, all passed: {results:?}",
                &run[6..],
                tests
            ),
            tests > 0 && results.len() == tests && passed == tests,
        );
        eprintln!(
            "{SUITE} run {} in one boot: {passed} of {} tests passed",
            &run[6..],
            results.len()
        );
    }

    // 4. A module built outside the tree, with `make M=`: one overflow of each operation, loaded,
    //    unloaded and loaded again.
    let oot = build_oot(ctx)?;
    let outside = boot_with_args(
        ctx,
        "out-of-tree",
        boot::Args {
            script: Some(format!(
                r#"
insmod /extra/{OOT}.ko || echo "overflow-harness: insmod failed"
rmmod {OOT} || echo "overflow-harness: rmmod failed"
insmod /extra/{OOT}.ko || echo "overflow-harness: insmod failed"
rmmod {OOT} && echo "overflow-harness: {OOT} unloaded"
"#
            )),
            extra_modules: vec![oot],
            ..Default::default()
        },
    )?;
    let warns: Vec<&WarnReport> = outside
        .boot
        .console
        .warns
        .iter()
        .filter(|w| w.file.ends_with(&format!("{OOT}.rs")) && w.complete)
        .collect();
    let reported: Vec<&str> = warns.iter().filter_map(|w| w.message.as_deref()).collect();
    let callers: Vec<&str> = warns.iter().filter_map(|w| w.caller.as_deref()).collect();
    checks.check(
        &format!(
            "out of tree: each WARN, the call's too, names a function of the module: {callers:?}"
        ),
        callers.len() == warns.len()
            && !callers.is_empty()
            && callers.iter().all(|c| c.ends_with(&format!("[{OOT}]"))),
    );
    let expected: Vec<&str> = OOT_MESSAGES.iter().chain(OOT_MESSAGES).copied().collect();
    checks.check(
        &format!(
            "out of tree: each load reports add, sub, mul, neg, shl and a u128 add (a call, not \
             a trap) with their operands and types, in order: {reported:?}"
        ),
        reported == expected,
    );
    checks.check(
        "out of tree: both loads continue with the wrapped values, and the module unloads cleanly",
        outside.count(OOT_WRAPPED) == 2
            && outside
                .console
                .contains(&format!("overflow-harness: {OOT} unloaded"))
            && !outside.console.contains("overflow-harness: insmod failed")
            && !outside.console.contains("overflow-harness: rmmod failed"),
    );
    Ok(checks)
}

/// The 1-based line and column where `expr` starts on the one line of `source` that assigns
/// it (`= expr;`): the site an overflow in `expr` reports.
pub fn assignment_site(source: &str, expr: &str) -> Option<(u32, u32)> {
    let needle = format!("= {expr};");
    let mut hits = source.lines().enumerate().filter_map(|(i, l)| {
        let col = l.find(&needle)? + 2;
        Some((i as u32 + 1, col as u32 + 1))
    });
    let first = hits.next()?;
    hits.next().is_none().then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kunit_results() {
        let log = [
            "KTAP version 1",
            "# Subtest: rust_overflow_report",
            "1..3",
            "    ok 1 reports_and_continues",
            "    not ok 2 site_reported_once",
            "    ok 3 reports_in_hardirq # SKIP no reason",
            "not ok 1 rust_overflow_report",
        ];
        assert_eq!(
            kunit_results(&log),
            [
                ("reports_and_continues".to_string(), true),
                ("site_reported_once".to_string(), false),
                ("reports_in_hardirq".to_string(), true),
            ]
        );
    }

    #[test]
    fn assignment_site_is_where_the_expression_starts() {
        let src = "fn f() {\n    let x = a + b;\n    pr_info!(\"{a} + {b}\");\n}\n";
        assert_eq!(assignment_site(src, "a + b"), Some((2, 13)));
        assert_eq!(assignment_site(src, "c + d"), None);
        let twice = format!("{src}{src}");
        assert_eq!(assignment_site(&twice, "a + b"), None);
    }
}
