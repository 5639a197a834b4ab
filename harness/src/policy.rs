//! Boot checks of the x86_64 report-mode kernel: the sample's report, the `rust_overflow.policy`
//! parameter on the command line and in sysfs, and the statistics in debugfs across module
//! unloads and reloads and a storm.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::boot::{self, Boot};
use crate::ctx::{Arch, Ctx, Mode};
use crate::run::{run_logged, Lock};
use crate::test::assignment_site;

pub const SAMPLE: &str = "samples/rust/rust_overflow_report.rs";
const MODULE: &str = "rust_overflow_report";
/// Overflows of the storm step (the sample's `overflows` parameter).
pub const STORM: u64 = 1_000_000;

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
];
const OOT_WRAPPED: &str = "wrapped: add 44 sub 32767 mul 605032704 neg -9223372036854775808 shl 64";

/// Builds `harness/oot` with `make M=` against the x86_64 report-mode build, in a copy in the
/// work directory; returns the module file.
fn build_oot(ctx: &Ctx) -> Result<PathBuf> {
    let out = crate::kernel::completed_build(ctx, Arch::X86_64, Mode::Report)?;
    let dir = ctx.work.join("oot");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir)?;
    for name in ["Kbuild", "overflow_oot.rs"] {
        let from = ctx.repo.join("harness/oot").join(name);
        fs::copy(&from, dir.join(name)).with_context(|| format!("copying {}", from.display()))?;
    }
    let toolchain = crate::kernel::current_toolchain(ctx)?;
    let module_dir = format!("M={}", dir.display());
    let cmd = crate::kernel::make(
        &ctx.linux_src(),
        &out,
        Arch::X86_64,
        &ctx.make_vars(&toolchain),
        &[&module_dir, "modules"],
    );
    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    run_logged(
        cmd,
        "make M=oot modules",
        &ctx.log("oot-build")?,
        Duration::from_secs(600),
    )?;
    Ok(dir.join(format!("{OOT}.ko")))
}

/// Shell functions for the guest. `show STEP` prints the policy and every line of the statistics
/// file prefixed with `overflow-harness: STEP:`; `reload ARGS` unloads the sample and loads it
/// again with ARGS.
const HELPERS: &str = r#"
P=/sys/module/rust_overflow/parameters/policy
S=/sys/kernel/debug/rust_overflow/stats
show() {
    echo "overflow-harness: $1: policy $(cat $P)"
    sed "s/^/overflow-harness: $1: /" $S
}
reload() {
    rmmod rust_overflow_report
    insmod /modules/rust_overflow_report.ko "$@" || echo "overflow-harness: insmod failed"
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

    /// The name of the first step that `show` printed in this boot.
    fn first_step(&self) -> Option<&str> {
        self.console.lines().find_map(|l| {
            let (step, rest) = l.strip_prefix("overflow-harness: ")?.split_once(": ")?;
            rest.starts_with("policy ").then_some(step)
        })
    }

    /// Whether `show STEP` printed the policy `policy` and the counts `warned` and `repeats`. The
    /// suppressed and nested counts must be those of the boot's first step: the KUnit suite that
    /// runs at boot makes them, and the sample must not add to them.
    fn shows(&self, step: &str, policy: &str, warned: u64, repeats: u64) -> bool {
        let lines = self.step(step);
        let first = self.first_step().map(|s| self.step(s)).unwrap_or_default();
        let value = |lines: &[&'_ str], name: &str| -> Option<String> {
            lines
                .iter()
                .find(|l| l.starts_with(name))
                .map(|l| l.to_string())
        };
        let kept = |name: &str| {
            value(&first, name).is_some() && value(&lines, name) == value(&first, name)
        };
        [
            format!("policy {policy}"),
            format!("warned {warned}"),
            format!("repeats {repeats}"),
        ]
        .iter()
        .all(|want| lines.contains(&want.as_str()))
            && kept("suppressed ")
            && kept("nested ")
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
    boot_with_extra(ctx, label, cmdline, script, Vec::new())
}

fn boot_with_extra(
    ctx: &Ctx,
    label: &str,
    cmdline: &[&str],
    script: &str,
    extra_modules: Vec<PathBuf>,
) -> Result<Outcome> {
    let args = boot::Args {
        arch: Arch::X86_64,
        mode: Mode::Report,
        cmdline: cmdline.iter().map(|s| s.to_string()).collect(),
        script: Some(format!("{HELPERS}\n{script}")),
        extra_modules,
        ..Default::default()
    };
    let out = crate::kernel::completed_build(ctx, Arch::X86_64, Mode::Report)?;
    let boot = boot::boot_build(ctx, &out, &args, &format!("boot-x86_64-report-{label}"))?;
    let console = fs::read_to_string(&boot.console_log)?;
    Ok(Outcome { boot, console })
}

/// Runs the five boots (policy switched in sysfs, set on the command line, the KUnit suite run
/// again, a module built outside the tree, and `panic` on the command line) on the built x86_64
/// report-mode kernel and checks what they printed.
pub fn run(ctx: &Ctx, src: &Path) -> Result<Checks> {
    let (line, column) = assignment_site(&fs::read_to_string(src.join(SAMPLE))?, "a + b")
        .with_context(|| {
            format!("{SAMPLE} has no single `= a + b;` to check the report against")
        })?;
    let site = format!("{SAMPLE}:{line}:{column}");
    let mut checks = Checks::default();

    // 1. The default policy, then switched through sysfs. Each load of the sample has fresh
    //    sites, which live in the module's data, so the handler reports a reloaded module again;
    //    the counts in debugfs are global and survive the unloads.
    let storm = STORM;
    let sysfs = boot_with(
        ctx,
        "policy-sysfs",
        &[],
        &format!(
            r#"
show loaded
reload overflows=3
show reloaded
echo always > $P
reload overflows=3
show always
echo bogus > $P || echo "overflow-harness: bogus rejected"
show bogus
echo once > $P
reload overflows={storm}
show storm
echo panic > $P
reload
show panic
"#
        ),
    )?;
    let message = "attempt to add with overflow: 200_u8 + 100_u8";
    let first = sysfs.boot.console.warns.iter().find(|w| w.file == SAMPLE);
    checks.check(
        &format!(
            "the first load reports the sample's overflow at {site}, with the column, the \
             operation and the operands, the sample's function in the call trace and an \
             end-of-trace marker: {first:?}"
        ),
        first.is_some_and(|w| {
            w.line == line
                && w.column == Some(column)
                && w.message.as_deref() == Some(message)
                && w.text
                    .iter()
                    .any(|l| l.contains("Module4init") && l.contains(&format!("[{MODULE}]")))
                && w.complete
        }),
    );
    checks.check(
        "once: the first load is reported, nothing else counted",
        sysfs.shows("loaded", "once", 1, 0),
    );
    checks.check(
        "once: a reload has fresh sites: its first overflow is reported, the other 2 counted",
        sysfs.shows("reloaded", "once", 2, 2),
    );
    checks.check(
        "always (sysfs): all 3 overflows of the next load are reported",
        sysfs.shows("always", "always", 5, 2),
    );
    checks.check(
        "writing `bogus` to the parameter fails and leaves `always`",
        sysfs.console.contains("overflow-harness: bogus rejected")
            && sysfs.shows("bogus", "always", 5, 2)
            && sysfs.count("rust_overflow.policy: invalid value") == 1,
    );
    checks.check(
        &format!(
            "once: a storm of {storm} overflows at one site is reported once, the rest counted"
        ),
        sysfs.shows("storm", "once", 6, 2 + storm - 1),
    );
    checks.check(
        "the sample's site was reported 6 times: once per load under `once`, 3 times under `always`",
        sysfs.sample_warns() == 6,
    );
    checks.check(
        "panic (sysfs): the next load panics at the site, and the sample does not go on",
        // One line per WARN, and the panic message.
        sysfs.count(&format!("{message} at {site}")) == sysfs.sample_warns() + 1
            && sysfs.count("panicked at") == 1
            && sysfs.count("still running") == 4,
    );
    eprintln!(
        "statistics after the storm:\n{}",
        sysfs.step("storm").join("\n")
    );

    // 2. An invalid value and `always` on the command line.
    let cmdline = boot_with(
        ctx,
        "policy-cmdline",
        &["rust_overflow.policy=bogus", "rust_overflow.policy=always"],
        "show boot\nreload overflows=2\nshow always\n",
    )?;
    checks.check(
        "`rust_overflow.policy=bogus` on the command line is rejected with a message",
        cmdline.count("rust_overflow.policy: invalid value") == 1,
    );
    checks.check(
        "`rust_overflow.policy=always` on the command line: every overflow is reported",
        cmdline.shows("boot", "always", 1, 0)
            && cmdline.shows("always", "always", 3, 0)
            && cmdline.sample_warns() == 3,
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
    let outside = boot_with_extra(
        ctx,
        "out-of-tree",
        &[],
        &format!(
            r#"
show loaded
insmod /extra/{OOT}.ko || echo "overflow-harness: insmod failed"
show oot-1
rmmod {OOT} || echo "overflow-harness: rmmod failed"
insmod /extra/{OOT}.ko || echo "overflow-harness: insmod failed"
show oot-2
rmmod {OOT} && echo "overflow-harness: {OOT} unloaded"
"#
        ),
        vec![oot],
    )?;
    let reported: Vec<&str> = outside
        .boot
        .console
        .warns
        .iter()
        .filter(|w| w.file.ends_with(&format!("{OOT}.rs")) && w.complete)
        .filter_map(|w| w.message.as_deref())
        .collect();
    let expected: Vec<&str> = OOT_MESSAGES.iter().chain(OOT_MESSAGES).copied().collect();
    checks.check(
        &format!(
            "out of tree: each load reports add, sub, mul, neg and shl with their operands and \
             types, in order: {reported:?}"
        ),
        reported == expected,
    );
    checks.check(
        "out of tree: both loads continue with the wrapped values",
        outside.count(OOT_WRAPPED) == 2,
    );
    let warned = |step: &str| {
        outside
            .step(step)
            .iter()
            .find_map(|l| l.strip_prefix("warned ")?.parse::<u64>().ok())
    };
    checks.check(
        "out of tree: the statistics count 5 reports per load, and the module unloads cleanly",
        warned("loaded")
            .is_some_and(|n| warned("oot-1") == Some(n + 5) && warned("oot-2") == Some(n + 10))
            && outside
                .console
                .contains(&format!("overflow-harness: {OOT} unloaded"))
            && !outside.console.contains("overflow-harness: insmod failed")
            && !outside.console.contains("overflow-harness: rmmod failed"),
    );

    // 5. `panic` on the command line: the first load panics.

    let panic = boot_with(
        ctx,
        "policy-panic",
        &["rust_overflow.policy=panic"],
        "show boot\n",
    )?;
    checks.check(
        "`rust_overflow.policy=panic` on the command line: the load panics at the site",
        panic.count(&format!(
            "attempt to add with overflow: 200_u8 + 100_u8 at {site}"
        )) >= 1
            && panic.count("panicked at") == 1
            && panic.count("still running") == 0
            && panic.sample_warns() == 0,
    );
    Ok(checks)
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
            "    ok 3 policy_names # SKIP no reason",
            "not ok 1 rust_overflow_report",
        ];
        assert_eq!(
            kunit_results(&log),
            [
                ("reports_and_continues".to_string(), true),
                ("site_reported_once".to_string(), false),
                ("policy_names".to_string(), true),
            ]
        );
    }
}
