//! Boot checks of the x86_64 report-mode kernel: the sample's report, the `rust_overflow.policy`
//! parameter on the command line and in sysfs, and the statistics in debugfs across a module
//! unload and reload and a storm.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

use crate::boot::{self, Boot};
use crate::ctx::{Arch, Ctx, Mode};
use crate::test::assignment_site;

pub const SAMPLE: &str = "samples/rust/rust_overflow_report.rs";
const MODULE: &str = "rust_overflow_report";
/// Overflows of the storm step (the sample's `overflows` parameter).
pub const STORM: u64 = 1_000_000;

/// Shell functions for the guest. `show STEP` prints the policy and every line of the statistics
/// file prefixed with `overflow-harness: STEP:`; `reload ARGS` unloads the sample and loads it
/// again with ARGS.
const HELPERS: &str = r#"
P=/sys/module/rust_overflow/parameters/policy
S=/sys/kernel/debug/rust_overflow/sites
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
    /// `file:line:column` of the sample's overflow.
    site: String,
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

    /// Whether `show STEP` printed the policy `policy` and the sample's site with `hits` hits.
    fn shows(&self, step: &str, policy: &str, hits: u64) -> bool {
        let lines = self.step(step);
        let site = format!("{} add {hits} {MODULE}", self.site);
        lines.contains(&format!("policy {policy}").as_str()) && lines.contains(&site.as_str())
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

fn boot_with(
    ctx: &Ctx,
    site: &str,
    label: &str,
    cmdline: &[&str],
    script: &str,
) -> Result<Outcome> {
    let args = boot::Args {
        arch: Arch::X86_64,
        mode: Mode::Report,
        cmdline: cmdline.iter().map(|s| s.to_string()).collect(),
        script: Some(format!("{HELPERS}\n{script}")),
        ..Default::default()
    };
    let out = crate::kernel::completed_build(ctx, Arch::X86_64, Mode::Report)?;
    let boot = boot::boot_build(ctx, &out, &args, &format!("boot-x86_64-report-{label}"))?;
    let console = fs::read_to_string(&boot.console_log)?;
    Ok(Outcome {
        boot,
        console,
        site: site.to_string(),
    })
}

/// Runs the three boots (policy switched in sysfs, set on the command line, and `panic` on the
/// command line) on the built x86_64 report-mode kernel and checks what they printed.
pub fn run(ctx: &Ctx, src: &Path) -> Result<Checks> {
    let (line, column) = assignment_site(&fs::read_to_string(src.join(SAMPLE))?, "a + b")
        .with_context(|| {
            format!("{SAMPLE} has no single `= a + b;` to check the report against")
        })?;
    let site = format!("{SAMPLE}:{line}:{column}");
    let mut checks = Checks::default();

    // 1. The default policy, then switched through sysfs; the sample is unloaded and loaded again
    //    between the steps, so the statistics must survive the unload.
    let storm = STORM;
    let sysfs = boot_with(
        ctx,
        &site,
        "policy-sysfs",
        &[],
        &format!(
            r#"
show loaded
reload
show reloaded
echo always > $P
reload
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
    let first = sysfs.boot.console.warns.iter().find(|w| w.file == SAMPLE);
    checks.check(
        &format!(
            "the first load reports the sample's overflow at {site}, with the column, the \
             operation, the sample's function as the caller and an end-of-trace marker: \
             {first:?}"
        ),
        first.is_some_and(|w| {
            w.line == line
                && w.column == Some(column)
                && w.message.as_deref() == Some("attempt to add with overflow")
                && w.caller
                    .as_deref()
                    .is_some_and(|c| c.contains("[rust_overflow_report]"))
                && w.complete
        }),
    );
    checks.check(
        "once: the first load's site is in the statistics with 1 hit and the module's name",
        sysfs.shows("loaded", "once", 1),
    );
    checks.check(
        "once: after an unload and a reload, the same site has 2 hits",
        sysfs.shows("reloaded", "once", 2),
    );
    checks.check(
        "always (sysfs): the reload is counted, 3 hits",
        sysfs.shows("always", "always", 3),
    );
    checks.check(
        "writing `bogus` to the parameter fails and leaves `always`",
        sysfs.console.contains("overflow-harness: bogus rejected")
            && sysfs.shows("bogus", "always", 3)
            && sysfs.count("rust_overflow.policy: invalid value") == 1,
    );
    checks.check(
        &format!("once: a storm of {storm} overflows at the site is counted"),
        sysfs.shows("storm", "once", 3 + storm),
    );
    checks.check(
        "the sample's site was reported twice: on the first load and under `always`",
        sysfs.sample_warns() == 2,
    );
    checks.check(
        "nothing was untracked or nested",
        sysfs.step("storm").contains(&"untracked 0") && sysfs.step("storm").contains(&"nested 0"),
    );
    checks.check(
        "panic (sysfs): the next load panics at the site, and the sample does not go on",
        // One line per WARN, and the panic message.
        sysfs.count(&format!("attempt to add with overflow at {site}")) == sysfs.sample_warns() + 1
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
        &site,
        "policy-cmdline",
        &["rust_overflow.policy=bogus", "rust_overflow.policy=always"],
        "show boot\nreload\nshow always\n",
    )?;
    checks.check(
        "`rust_overflow.policy=bogus` on the command line is rejected with a message",
        cmdline.count("rust_overflow.policy: invalid value") == 1,
    );
    checks.check(
        "`rust_overflow.policy=always` on the command line: both loads are reported",
        cmdline.shows("boot", "always", 1)
            && cmdline.shows("always", "always", 2)
            && cmdline.sample_warns() == 2,
    );

    // 3. `panic` on the command line: the first load panics.
    let panic = boot_with(
        ctx,
        &site,
        "policy-panic",
        &["rust_overflow.policy=panic"],
        "show boot\n",
    )?;
    checks.check(
        "`rust_overflow.policy=panic` on the command line: the load panics at the site",
        panic.count(&format!("attempt to add with overflow at {site}")) >= 1
            && panic.count("panicked at") == 1
            && panic.count("still running") == 0
            && panic.sample_warns() == 0,
    );
    Ok(checks)
}
