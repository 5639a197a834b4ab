//! `drivers`: every Rust driver and sample of Linux 7.2 that builds on an architecture.
//!
//! The configuration (`configs/kernel/drivers.config` and `drivers-<arch>.config` on top of the
//! base) is built with `make CLIPPY=1` in off, panic and report mode, each from an empty
//! directory `build/<arch>-<mode>-drivers`. Report mode must add no compiler, clippy, objtool,
//! linker or modpost warning to panic mode. The `.text` of the drivers' Rust objects in the
//! three modes goes to `drivers/<arch>.md`. Then the report-mode kernel boots in QEMU with test
//! devices, and `harness/assets/drivers-guest.sh` loads every Rust module, pushes I/O through
//! rnull, opens binder, draws the drm_panic QR code, binds the samples to their devices, and
//! unloads and reloads the modules; the boot fails on a failed step, a WARN, an oops or an
//! overflow report.

mod guest;
mod modules;
mod warnings;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::boot;
use crate::ctx::{Arch, Ctx, Mode};
use crate::kernel;
use crate::measure::{self, Triple};
use crate::run::{capture, run_logged, Lock};
use crate::toolchain;

use self::guest::Status;
use self::modules::Owner;

const MODES: [Mode; 3] = [Mode::Off, Mode::Panic, Mode::Report];
/// Written into a build directory once its build succeeded: the tree's HEAD, the `make`
/// variables and the configuration fragment.
const COMPLETE: &str = ".overflow-harness-drivers-complete";
/// The build log, kept in the build directory for `--reuse-builds`.
const SAVED_LOG: &str = ".overflow-harness-drivers.log";
/// The SSDT with the `LNUXBEEF` device, for x86_64.
const SSDT: &str = include_str!("../assets/drivers-ssdt.asl");
/// The `test,rust-device` node added to QEMU's device tree, for arm64.
const DT_NODE: &str = include_str!("../assets/drivers-node.dtsi");
const TOOL_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_enum, default_value_t)]
    pub arch: Arch,
    /// Keep a mode's build directory if its last `drivers` build was of the same tree,
    /// toolchain and configuration, instead of building from an empty directory (for working
    /// on the boot; the warnings are then those of that build's saved log).
    #[arg(long)]
    pub reuse_builds: bool,
    /// Build and measure only; do not boot.
    #[arg(long)]
    pub no_boot: bool,
    /// Seconds before the boot's QEMU is killed.
    #[arg(long, default_value_t = 900)]
    pub timeout: u64,
}

/// A finished build of one mode.
struct Built {
    mode: Mode,
    out: PathBuf,
    log: PathBuf,
}

/// The `.text` of one driver (a module, or a built-in Rust object) in the three modes.
struct SizeRow {
    owner: Owner,
    objects: BTreeSet<String>,
    text: Triple,
}

/// What the boot of the report-mode kernel found.
struct Booted {
    console_log: PathBuf,
    steps: guest::Report,
    warns: Vec<String>,
    suspicious: Vec<String>,
}

/// Everything `drivers/<arch>.md` reports.
struct Results {
    arch: Arch,
    date: String,
    toolchain: String,
    head: String,
    warnings: BTreeMap<String, Vec<String>>,
    new_in_report: Vec<String>,
    new_in_panic: Vec<String>,
    sizes: BTreeMap<String, SizeRow>,
    boot: Option<std::result::Result<Booted, String>>,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let arch = args.arch;
    let src = ctx.linux_src();
    if !src.join(".git").exists() {
        bail!("{} does not exist; run `tree` first", src.display());
    }
    let toolchain = kernel::current_toolchain(ctx)?;
    if !toolchain.join("bin/clippy-driver").exists() {
        bail!(
            "the toolchain {} has no clippy-driver, which `make CLIPPY=1` needs; build it with \
             `cargo run --release -- toolchain --tools`",
            toolchain.display()
        );
    }
    if !toolchain::supports_report(&toolchain) {
        bail!(
            "{} does not accept -Coverflow-checks=report; build the patched toolchain with \
             `toolchain --tools`",
            toolchain.display()
        );
    }
    if !kernel::has_kconfig(&src, "RUST_OVERFLOW_REPORT") {
        bail!("the tree has no CONFIG_RUST_OVERFLOW_REPORT: patches/linux does not provide report mode; run `tree`");
    }
    let mut vars = ctx.make_vars(&toolchain);
    vars.push("CLIPPY=1".into());
    let head = kernel::head(&src)?;

    let mut builds = Vec::new();
    for mode in MODES {
        eprintln!("== drivers {arch}: {mode} mode");
        builds.push(build(ctx, arch, mode, &vars, &head, args.reuse_builds)?);
    }

    eprintln!("== drivers {arch}: warnings");
    let mut warnings = BTreeMap::new();
    let src_dir = src.display().to_string();
    fs::create_dir_all(ctx.work.join("drivers"))?;
    for b in &builds {
        let log = fs::read_to_string(&b.log)
            .with_context(|| format!("reading the build log {}", b.log.display()))?;
        let found = warnings::collect(&log, &[&b.out.display().to_string(), &src_dir]);
        eprintln!("  {} mode: {} warning line(s)", b.mode, found.len());
        let list = format!("drivers/{arch}-{}-warnings.txt", b.mode);
        fs::write(ctx.work.join(list), found.join("\n") + "\n")?;
        warnings.insert(b.mode.to_string(), found);
    }
    let new_in_report = warnings::new_in(&warnings["panic"], &warnings["report"]);
    let new_in_panic = warnings::new_in(&warnings["off"], &warnings["panic"]);
    for (title, list) in [
        ("new in panic mode vs off (for information)", &new_in_panic),
        ("new in report mode vs panic", &new_in_report),
    ] {
        eprintln!("  {title}: {}", list.len());
        for w in list {
            eprintln!("    {w}");
        }
    }

    eprintln!("== drivers {arch}: .text of the Rust objects");
    let sizes = measure(&builds)?;

    let first_line = |program: &Path, arg: &str| -> Result<String> {
        let mut cmd = Command::new(program);
        cmd.arg(arg);
        Ok(capture(cmd, Duration::from_secs(60))?.trim().to_string())
    };
    let mut results = Results {
        arch,
        date: first_line(Path::new("date"), "-u")?,
        toolchain: first_line(&toolchain.join("bin/rustc"), "-V")?,
        head,
        warnings,
        new_in_report,
        new_in_panic,
        sizes,
        boot: None,
    };
    let md_path = ctx.work.join("drivers").join(format!("{arch}.md"));
    fs::write(&md_path, markdown(&results))?;

    if !args.no_boot {
        eprintln!("== drivers {arch}: boot of the report-mode kernel");
        let report = builds.iter().find(|b| b.mode == Mode::Report);
        let out = &report.expect("report mode is built").out;
        let booted = boot_drivers(ctx, arch, out, args.timeout).map_err(|e| format!("{e:#}"));
        if let Err(e) = &booted {
            eprintln!("error in the boot: {e}");
        }
        results.boot = Some(booted);
    }

    let md = markdown(&results);
    fs::write(&md_path, &md)?;
    print!("{md}");
    eprintln!("wrote {}", md_path.display());

    let failures = failures(&results);
    if !failures.is_empty() {
        eprintln!("\ndrivers {arch} failed:");
        for f in &failures {
            eprintln!("  {f}");
        }
        bail!(
            "{} check(s) of `drivers --arch {arch}` failed",
            failures.len()
        );
    }
    eprintln!("drivers {arch}: no new warning in report mode, every boot step passed or was skipped with a reason, no WARN");
    Ok(())
}

/// What failed, one line each.
fn failures(r: &Results) -> Vec<String> {
    let mut out = Vec::new();
    if !r.new_in_report.is_empty() {
        out.push(format!(
            "report mode adds {} warning(s) to panic mode",
            r.new_in_report.len()
        ));
    }
    match &r.boot {
        None => {}
        Some(Err(e)) => out.push(format!("boot: {}", e.lines().next().unwrap_or_default())),
        Some(Ok(b)) => {
            for s in b.steps.steps.iter().filter(|s| s.status == Status::Fail) {
                out.push(format!("guest step failed: {}: {}", s.name, s.detail));
            }
            if !b.steps.finished {
                out.push(format!(
                    "the guest script did not finish; see {}",
                    b.console_log.display()
                ));
            }
            for w in &b.warns {
                out.push(format!("WARN in dmesg: {w}"));
            }
            for l in &b.suspicious {
                out.push(format!("in dmesg: {l}"));
            }
        }
    }
    out
}

/// The fragment files of a drivers build, in order: no overflow-report sample or KUnit (the
/// sample overflows on purpose), the same drivers in every mode.
fn fragment_files(arch: Arch) -> [String; 4] {
    [
        "kernel/base.config".into(),
        format!("kernel/{arch}.config"),
        "kernel/drivers.config".into(),
        format!("kernel/drivers-{arch}.config"),
    ]
}

/// Configures and builds one mode from an empty directory with [`kernel::make_kernel`], or
/// reuses the directory (see `--reuse-builds`).
fn build(
    ctx: &Ctx,
    arch: Arch,
    mode: Mode,
    vars: &[String],
    head: &str,
    reuse: bool,
) -> Result<Built> {
    let out = ctx.work.join(format!("build/{arch}-{mode}-drivers"));
    let fragment = kernel::read_fragment(ctx, &fragment_files(arch), mode)?;
    let key = format!("{head}\n{}\n{fragment}", vars.join("\n"));
    let log = out.join(SAVED_LOG);
    if reuse && fs::read_to_string(out.join(COMPLETE)).is_ok_and(|k| k == key) && log.exists() {
        eprintln!(
            "drivers: reusing {} (same tree, toolchain and configuration; --reuse-builds)",
            out.display()
        );
        return Ok(Built { mode, out, log });
    }

    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    if out.exists() {
        eprintln!("drivers: emptying {}", out.display());
        fs::remove_dir_all(&out).with_context(|| format!("removing {}", out.display()))?;
    }
    let label = format!("drivers-{arch}-{mode}");
    kernel::make_kernel(
        ctx,
        &ctx.linux_src(),
        &out,
        arch,
        vars,
        &fragment,
        kernel::Base::Defaults,
        &label,
    )?;
    fs::copy(ctx.work.join(format!("logs/{label}.log")), &log)?;
    fs::write(out.join(COMPLETE), key)?;
    Ok(Built { mode, out, log })
}

/// `.text` of every Rust object of the three builds, summed per module (its Rust members) or
/// per built-in object; the `rust/` crates are rows of their own.
fn measure(builds: &[Built]) -> Result<BTreeMap<String, SizeRow>> {
    let mut rows: BTreeMap<String, SizeRow> = BTreeMap::new();
    for b in builds {
        let modules = modules::read_modules(&b.out)?;
        let objects = measure::rust_objects(&b.out)?;
        eprintln!("  {} mode: {} Rust objects", b.mode, objects.len());
        let mut sums: BTreeMap<String, u64> = BTreeMap::new();
        for obj in objects {
            let rel = obj.strip_prefix(&b.out).unwrap_or(&obj);
            let rel = rel.display().to_string();
            let owner = modules::owner(&rel, &modules);
            let key = match &owner {
                Owner::Module(file) => file.clone(),
                Owner::BuiltIn | Owner::RustDir => rel.clone(),
            };
            *sums.entry(key.clone()).or_default() += measure::text_size(&obj)?;
            let row = rows.entry(key).or_insert_with(|| SizeRow {
                owner,
                objects: BTreeSet::new(),
                text: Triple::default(),
            });
            row.objects.insert(rel);
        }
        for (key, sum) in sums {
            rows.get_mut(&key).unwrap().text.set(b.mode, sum);
        }
    }
    Ok(rows)
}

/// The QEMU devices the samples and drivers bind to: `pci-testdev` (`rust_driver_pci`,
/// `rust_dma`, `rust_driver_auxiliary`) and a bochs display for drm_panic.
fn devices(arch: Arch) -> Vec<String> {
    ["-device", "pci-testdev"]
        .iter()
        .chain(&boot::bochs_display(arch))
        .map(|s| s.to_string())
        .collect()
}

/// The firmware the platform samples bind to, as QEMU arguments: on x86_64 an SSDT with the
/// `LNUXBEEF` device (`iasl`), on arm64 QEMU's own device tree with the `test,rust-device` node
/// added (`dtc`).
fn firmware(ctx: &Ctx, arch: Arch, out: &Path, dir: &Path) -> Result<Vec<String>> {
    let log = ctx.log(&format!("drivers-{arch}-firmware"))?;
    if arch == Arch::X86_64 {
        let asl = dir.join("ssdt-lnuxbeef.asl");
        fs::write(&asl, SSDT)?;
        let mut iasl = Command::new("iasl");
        iasl.arg(&asl);
        run_logged(iasl, "iasl", &log, TOOL_TIMEOUT)?;
        let aml = dir.join("ssdt-lnuxbeef.aml");
        return Ok(vec!["-acpitable".into(), format!("file={}", aml.display())]);
    }
    // QEMU dumps the tree after loading the kernel and initrd; any initrd does.
    let dumped = dir.join("virt.dtb");
    let _ = fs::remove_file(&dumped);
    let initrd = dir.join("dumpdtb-initrd");
    fs::write(&initrd, b"overflow-harness: initrd for -machine dumpdtb\n")?;
    let mut qemu = boot::qemu(arch, &out.join(arch.image()), &initrd, "console=ttyAMA0", 2);
    qemu.args(devices(arch))
        .arg("-machine")
        .arg(format!("dumpdtb={}", dumped.display()));
    {
        let _lock = Lock::acquire(&ctx.heavy_lock())?;
        run_logged(qemu, "QEMU dumpdtb", &log, TOOL_TIMEOUT)?;
    }
    if !dumped.exists() {
        bail!("QEMU wrote no device tree to {}", dumped.display());
    }
    // dtc merges the node's `/ { ... };` block into the tree and gives it phandles.
    let dtc = |from: &str, to: &str, input: &Path, output: &Path| {
        let mut cmd = Command::new("dtc");
        cmd.args(["-I", from, "-O", to, "-o"])
            .arg(output)
            .arg(input);
        run_logged(cmd, &format!("dtc -O {to}"), &log, TOOL_TIMEOUT)
    };
    let dts = dir.join("virt-rust-device.dts");
    dtc("dtb", "dts", &dumped, &dts)?;
    fs::write(&dts, fs::read_to_string(&dts)? + DT_NODE)?;
    let dtb = dir.join("virt-rust-device.dtb");
    dtc("dts", "dtb", &dts, &dtb)?;
    Ok(vec!["-dtb".into(), dtb.display().to_string()])
}

/// Boots the report-mode kernel with the test devices and the guest script.
fn boot_drivers(ctx: &Ctx, arch: Arch, out: &Path, timeout: u64) -> Result<Booted> {
    let modules = modules::read_modules(out)?;
    let plan = modules::load_plan(&modules).context("ordering the modules for the guest")?;
    eprintln!(
        "drivers: {} module(s) built from Rust: {}",
        plan.rust.len(),
        plan.rust.join(" ")
    );
    if !plan.dependencies.is_empty() {
        eprintln!(
            "drivers: C modules they need, loaded first: {}",
            plan.dependencies.join(" ")
        );
    }
    let dir = ctx.work.join("drivers").join(arch.to_string());
    if dir.display().to_string().contains([',', ':']) {
        bail!(
            "QEMU's -acpitable and -machine dumpdtb= cannot take a file name with ',' or ':' ({}); \
             use another --work-dir",
            dir.display()
        );
    }
    fs::create_dir_all(&dir)?;
    let mut qemu_args = devices(arch);
    qemu_args.extend(firmware(ctx, arch, out, &dir)?);
    let script = guest::script(arch, &plan);
    fs::write(dir.join("drivers-guest.sh"), &script)?;
    let args = boot::Args {
        arch,
        mode: Mode::Report,
        // rnull transfers no data: with zeroed page-cache pages, what it reads back is known.
        cmdline: vec!["init_on_alloc=1".into()],
        timeout,
        script: Some(script),
        load_modules: false,
        qemu_args,
        ..Default::default()
    };
    let booted = boot::boot_build(ctx, out, &args, &format!("drivers-{arch}"))?;
    let console = fs::read_to_string(&booted.console_log)?;
    let steps = guest::parse_steps(&console)
        .with_context(|| format!("parsing {}", booted.console_log.display()))?;
    let dmesg = if booted.dmesg.is_empty() {
        &console
    } else {
        &booted.dmesg
    };
    for s in &steps.steps {
        let detail = if s.detail.is_empty() {
            String::new()
        } else {
            format!(": {}", s.detail)
        };
        eprintln!("  {} {}{detail}", s.status, s.name);
    }
    let warns = booted.console.warns.iter().map(|w| {
        let message = w.message.as_deref().unwrap_or("(no overflow message)");
        format!("{} {message}", w.site())
    });
    Ok(Booted {
        console_log: booted.console_log.clone(),
        steps,
        warns: warns.collect(),
        suspicious: guest::suspicious(dmesg),
    })
}

/// A Markdown table cell: no `|` or line break.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn size_row(w: &mut String, name: &str, objects: &str, t: &Triple) {
    writeln!(
        w,
        "| {name} | {objects} | {} | {} | {} | {:.4} |",
        t.off,
        t.panic,
        t.report,
        t.report_panic()
    )
    .unwrap();
}

fn sum<'a>(rows: impl Iterator<Item = &'a SizeRow>) -> Triple {
    rows.map(|r| r.text).sum()
}

fn markdown(r: &Results) -> String {
    let arch = r.arch;
    let mut s = String::new();
    let w = &mut s;
    writeln!(w, "# Rust drivers and samples of Linux 7.2, {arch}\n").unwrap();
    writeln!(
        w,
        "Written by `cargo run --release -- drivers --arch {arch}` on {}.\nToolchain: {}. \
         Tree: {}.\n\nConfiguration: `configs/{}` and the mode's overflow-checks \
         settings, built with `make LLVM=-22 CLIPPY=1`, each mode from an empty build \
         directory.\n",
        r.date,
        r.toolchain,
        r.head,
        fragment_files(arch).join("`, `configs/")
    )
    .unwrap();

    writeln!(w, "## `.text` of the drivers' Rust objects\n").unwrap();
    writeln!(
        w,
        "`.text*` sections (`llvm-size -A`) of every object rustc compiled, summed per module \
         (its Rust members) and per built-in object; bytes.\n"
    )
    .unwrap();
    writeln!(
        w,
        "| driver | Rust objects | off | panic | report | report/panic |\n|---|---|---:|---:|---:|---:|"
    )
    .unwrap();
    let drivers: Vec<(&String, &SizeRow)> = r
        .sizes
        .iter()
        .filter(|(_, row)| row.owner != Owner::RustDir)
        .collect();
    for (name, row) in &drivers {
        let objects: Vec<&str> = row.objects.iter().map(String::as_str).collect();
        let name = match row.owner {
            Owner::BuiltIn => format!("built in: `{name}`"),
            _ => format!("`{name}.ko`"),
        };
        size_row(w, &name, &cell(&objects.join(", ")), &row.text);
    }
    let total = sum(drivers.iter().map(|(_, r)| *r));
    size_row(
        w,
        "**total**",
        &format!(
            "{} objects",
            drivers.iter().map(|(_, r)| r.objects.len()).sum::<usize>()
        ),
        &total,
    );
    writeln!(w, "\n### The kernel's crates (`rust/`), for comparison\n").unwrap();
    writeln!(
        w,
        "| object | | off | panic | report | report/panic |\n|---|---|---:|---:|---:|---:|"
    )
    .unwrap();
    let crates: Vec<&SizeRow> = r
        .sizes
        .values()
        .filter(|row| row.owner == Owner::RustDir)
        .collect();
    for row in &crates {
        let name = row.objects.iter().next().cloned().unwrap_or_default();
        size_row(w, &format!("`{name}`"), "", &row.text);
    }
    size_row(w, "**total**", "", &sum(crates.iter().copied()));

    writeln!(w, "\n## Warnings of `make CLIPPY=1`\n").unwrap();
    writeln!(
        w,
        "Compiler, clippy, objtool, linker, Kconfig and modpost warnings, with the build \
         directories removed from paths and objtool's offsets masked; lists in \
         `drivers/{arch}-<mode>-warnings.txt`.\n"
    )
    .unwrap();
    writeln!(w, "| mode | warnings |\n|---|---:|").unwrap();
    for mode in MODES {
        let n = r.warnings.get(&mode.to_string()).map_or(0, Vec::len);
        writeln!(w, "| {mode} | {n} |").unwrap();
    }
    for (title, list) in [
        (
            "New in report mode (compared to panic mode)",
            &r.new_in_report,
        ),
        (
            "New in panic mode (compared to off; for information)",
            &r.new_in_panic,
        ),
    ] {
        if list.is_empty() {
            writeln!(w, "\n{title}: none.").unwrap();
        } else {
            writeln!(
                w,
                "\n{title}: {}.\n\n```text\n{}\n```",
                list.len(),
                list.join("\n")
            )
            .unwrap();
        }
    }

    writeln!(w, "\n## Boot of the report-mode kernel\n").unwrap();
    match &r.boot {
        None => writeln!(w, "Not run (`--no-boot`, or not yet).").unwrap(),
        Some(Err(e)) => writeln!(w, "The boot failed:\n\n```text\n{e}\n```").unwrap(),
        Some(Ok(b)) => {
            writeln!(
                w,
                "QEMU (TCG) with `{}`; `harness/assets/drivers-guest.sh`: {} passed, {} failed, \
                 {} skipped{}. WARN reports in dmesg: {}. Other suspicious dmesg lines: {}. \
                 Console log: `{}`.\n",
                devices(arch).join(" "),
                b.steps.count(Status::Pass),
                b.steps.count(Status::Fail),
                b.steps.count(Status::Skip),
                if b.steps.finished {
                    ""
                } else {
                    " (the script did not finish)"
                },
                b.warns.len(),
                b.suspicious.len(),
                b.console_log.display()
            )
            .unwrap();
            writeln!(w, "| step | result | detail |\n|---|---|---|").unwrap();
            for step in &b.steps.steps {
                writeln!(
                    w,
                    "| {} | {} | {} |",
                    cell(&step.name),
                    step.status,
                    cell(&step.detail)
                )
                .unwrap();
            }
            for (title, list) in [
                ("WARN reports", &b.warns),
                ("Suspicious lines", &b.suspicious),
            ] {
                if !list.is_empty() {
                    writeln!(w, "\n{title}:\n\n```text\n{}\n```", list.join("\n")).unwrap();
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_has_the_sizes_warnings_and_steps() {
        let row = |owner: Owner, object: &str, off, panic, report| SizeRow {
            owner,
            objects: [object.to_string()].into_iter().collect(),
            text: Triple { off, panic, report },
        };
        let sizes = [
            (
                "rnull_mod".to_string(),
                row(
                    Owner::Module("rnull_mod".into()),
                    "drivers/block/rnull/rnull.o",
                    100,
                    120,
                    130,
                ),
            ),
            (
                "drivers/gpu/drm/drm_panic_qr.o".to_string(),
                row(
                    Owner::BuiltIn,
                    "drivers/gpu/drm/drm_panic_qr.o",
                    200,
                    240,
                    250,
                ),
            ),
            (
                "rust/kernel.o".to_string(),
                row(Owner::RustDir, "rust/kernel.o", 1000, 1100, 1200),
            ),
        ]
        .into_iter()
        .collect();
        let steps = guest::parse_steps(
            "drivers-guest: PASS load rnull_mod\ndrivers-guest: FAIL bind x: a | b\ndrivers-guest: end\n",
        )
        .unwrap();
        let results = Results {
            arch: Arch::X86_64,
            date: "today".into(),
            toolchain: "rustc 1.96.0-dev".into(),
            head: "abc".into(),
            warnings: [("off", 1), ("panic", 2), ("report", 3)]
                .into_iter()
                .map(|(m, n)| (m.to_string(), vec!["w".to_string(); n]))
                .collect(),
            new_in_report: vec!["w".into()],
            new_in_panic: Vec::new(),
            sizes,
            boot: Some(Ok(Booted {
                console_log: PathBuf::from("/w/logs/drivers-x86_64.log"),
                steps,
                warns: Vec::new(),
                suspicious: Vec::new(),
            })),
        };
        let md = markdown(&results);
        assert!(md.contains(
            "| `rnull_mod.ko` | drivers/block/rnull/rnull.o | 100 | 120 | 130 | 1.0833 |"
        ));
        assert!(md.contains("| built in: `drivers/gpu/drm/drm_panic_qr.o` | drivers/gpu/drm/drm_panic_qr.o | 200 | 240 | 250 | 1.0417 |"));
        assert!(md.contains("| **total** | 2 objects | 300 | 360 | 380 | 1.0556 |"));
        assert!(md.contains("| `rust/kernel.o` |  | 1000 | 1100 | 1200 | 1.0909 |"));
        assert!(md.contains("| report | 3 |"));
        assert!(md.contains("New in report mode (compared to panic mode): 1.\n\n```text\nw\n```"));
        assert!(md.contains("New in panic mode (compared to off; for information): none."));
        assert!(md.contains("| bind x | FAIL | a \\| b |"));
        assert_eq!(
            failures(&results),
            [
                "report mode adds 1 warning(s) to panic mode",
                "guest step failed: bind x: a | b"
            ]
        );
    }
}
