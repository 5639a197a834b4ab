//! `kunit`: the tree's kunit.py with the patched toolchain, and a summary of its `--json`.

use std::fs;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use crate::ctx::{Ctx, Mode};
use crate::kernel;
use crate::run::{spawn_logged, tail, Lock};

/// A cross build of the kernel and the tests under TCG, on two busy cores.
const TIMEOUT: Duration = Duration::from_secs(120 * 60);

/// The architectures that kunit.py runs here: the two the rest of the harness boots, and UML,
/// 32-bit ARM and RISC-V through kunit.py's own QEMU configurations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum KunitArch {
    #[default]
    #[value(name = "x86_64")]
    X86_64,
    Arm64,
    /// User-mode Linux, kunit.py's default.
    Um,
    /// 32-bit ARMv7 (QEMU `virt`).
    Arm,
    /// riscv64 (QEMU `virt` with OpenSBI).
    Riscv,
}

impl KunitArch {
    /// kunit.py's `--arch`.
    pub fn kernel_arch(self) -> &'static str {
        match self {
            KunitArch::X86_64 => "x86_64",
            KunitArch::Arm64 => "arm64",
            KunitArch::Um => "um",
            KunitArch::Arm => "arm",
            KunitArch::Riscv => "riscv",
        }
    }

    /// What kunit.py runs the kernel with, which `setup` installs.
    fn runner(self) -> Option<&'static str> {
        match self {
            KunitArch::X86_64 => Some("qemu-system-x86_64"),
            KunitArch::Arm64 => Some("qemu-system-aarch64"),
            KunitArch::Um => None,
            KunitArch::Arm => Some("qemu-system-arm"),
            KunitArch::Riscv => Some("qemu-system-riscv64"),
        }
    }
}

impl std::fmt::Display for KunitArch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kernel_arch())
    }
}

/// The firmware that kunit.py's riscv configuration loads; without it, kunit.py exits with
/// status 0 and no results.
const OPENSBI: &str = "/usr/share/qemu/opensbi-riscv64-generic-fw_dynamic.bin";

#[derive(clap::Args, Default, Clone)]
pub struct Args {
    #[arg(long, value_enum, default_value_t)]
    pub arch: KunitArch,
    #[arg(long, value_enum, default_value_t)]
    pub mode: Mode,
    /// Build the kernel without the `kernel` crate's doctests (`CONFIG_RUST_KERNEL_DOCTESTS`):
    /// the same examples for another target, and the crate that takes longest to compile.
    #[arg(long)]
    pub no_doctests: bool,
}

/// Fails early, before the long build, if what runs the kernel is missing.
fn check_runner(arch: KunitArch) -> Result<()> {
    if let Some(qemu) = arch.runner() {
        let found = std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(qemu).is_file()));
        if !found {
            bail!("{qemu} is not installed; run `setup` (it installs qemu-system-arm and qemu-system-misc)");
        }
    }
    if arch == KunitArch::Riscv && !Path::new(OPENSBI).is_file() {
        bail!("{OPENSBI} is missing (package qemu-system-data); run `setup`");
    }
    Ok(())
}

/// A KUnit JSON group as `tools/testing/kunit/kunit_json.py` writes it.
#[derive(Debug, Deserialize)]
struct Group {
    name: String,
    #[serde(default)]
    sub_groups: Vec<Group>,
    #[serde(default)]
    test_cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
struct Case {
    name: String,
    status: String,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Suite {
    pub name: String,
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// `suite.case` of every test that did not pass or skip.
    pub failures: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    #[error("kunit.py's JSON is malformed: {0}")]
    Malformed(#[from] serde_json::Error),
    #[error("kunit.py's JSON has no test suites (did the kernel boot and run KUnit?)")]
    NoSuites,
}

fn count(group: &Group, path: &str, suite: &mut Suite) {
    for case in &group.test_cases {
        match case.status.as_str() {
            "PASS" => suite.passed += 1,
            "SKIP" => suite.skipped += 1,
            _ => {
                suite.failed += 1;
                suite
                    .failures
                    .push(format!("{path}.{} ({})", case.name, case.status));
            }
        }
    }
    for sub in &group.sub_groups {
        count(sub, &format!("{path}.{}", sub.name), suite);
    }
}

/// Per-suite counts from kunit.py's `--json` output.
pub fn parse_json(text: &str) -> Result<Vec<Suite>, JsonError> {
    let root: Group = serde_json::from_str(text)?;
    let suites: Vec<Suite> = root
        .sub_groups
        .iter()
        .map(|g| {
            let mut suite = Suite {
                name: g.name.clone(),
                ..Suite::default()
            };
            count(g, &g.name, &mut suite);
            suite
        })
        .collect();
    if suites.is_empty() {
        return Err(JsonError::NoSuites);
    }
    Ok(suites)
}

/// Makes QEMU under kunit.py use TCG.
///
/// kunit.py asks QEMU for `-accel kvm` first. On these machines /dev/kvm opens, but an x86_64
/// guest then hangs before the kernel prints anything, with qboot and SeaBIOS alike, while the
/// same kernel boots under TCG with either. kunit.py runs in a private mount namespace in which
/// /dev/kvm is /dev/null, so QEMU's KVM setup fails and it falls back to TCG.
fn hide_kvm(cmd: &mut Command) {
    if !Path::new("/dev/kvm").exists() {
        return;
    }
    let check = |ret: libc::c_int| {
        if ret == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    // SAFETY: the closure runs in the forked child before `exec` and only makes system calls
    // (`unshare`, `mount`) with pointers to static C strings; it does not allocate or lock.
    unsafe {
        cmd.pre_exec(move || {
            check(libc::unshare(libc::CLONE_NEWNS))?;
            // Keep the bind mount out of the rest of the system.
            let none = std::ptr::null();
            check(libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                none.cast(),
            ))?;
            check(libc::mount(
                c"/dev/null".as_ptr(),
                c"/dev/kvm".as_ptr(),
                none,
                libc::MS_BIND,
                none.cast(),
            ))
        });
    }
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<Vec<Suite>> {
    let src = ctx.linux_src();
    let toolchain = kernel::current_toolchain(ctx)?;
    if args.mode == Mode::Report && !kernel::has_kconfig(&src, "RUST_OVERFLOW_REPORT") {
        bail!("the tree has no CONFIG_RUST_OVERFLOW_REPORT: patches/linux does not provide report mode yet; use --mode panic");
    }
    check_runner(args.arch)?;
    let dir = ctx.kunit_dir(args.arch, args.mode);
    fs::create_dir_all(&dir)?;
    let json = dir.join("results.json");
    let _ = fs::remove_file(&json);
    let configs = ctx.repo.join("configs");
    let mut kunitconfigs = vec![configs.join("kunit/rust.kunitconfig")];
    if kernel::has_kconfig(&src, "RUST_OVERFLOW_REPORT_KUNIT_TEST") && args.mode == Mode::Report {
        kunitconfigs.push(configs.join("kunit/overflow-report.kunitconfig"));
    }
    let vars = ctx.make_vars(&toolchain);
    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    let label = format!("kunit-{}-{}", args.arch, args.mode);
    let log = ctx.log(&label)?;
    // kunit.py configures with `make olddefconfig`, every other option at its default. Except on
    // UML, whose defaults are small, start from `make allnoconfig` instead and hand kunit.py the
    // whole result as its kunitconfig: the same tests in a smaller kernel.
    if args.arch != KunitArch::Um {
        let mut fragment = String::new();
        for path in &kunitconfigs {
            let text =
                fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            for line in text.lines() {
                if !(args.no_doctests && line == "CONFIG_RUST_KERNEL_DOCTESTS=y") {
                    fragment += line;
                    fragment += "\n";
                }
            }
        }
        fragment += args.mode.kconfig();
        fragment += &qemu_kconfig(&src, args.arch)?;
        // What an architecture needs on allnoconfig that its defaults have (32-bit ARM's MMU).
        let extra = configs.join(format!("kunit/{}.config", args.arch.kernel_arch()));
        if extra.is_file() {
            fragment += &fs::read_to_string(&extra)
                .with_context(|| format!("reading {}", extra.display()))?;
        }
        let out = dir.join("allnoconfig");
        kernel::configure(
            &src,
            &out,
            args.arch.kernel_arch(),
            &vars,
            &fragment,
            kernel::Base::AllNo,
            &log,
        )?;
        kunitconfigs = vec![out.join(".config")];
    }

    let mut cmd = Command::new("python3");
    cmd.current_dir(&src)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args(["tools/testing/kunit/kunit.py", "run"])
        .arg(format!("--arch={}", args.arch.kernel_arch()))
        .arg(format!("--build_dir={}", dir.display()))
        .arg(format!(
            "--jobs={}",
            std::thread::available_parallelism().map_or(2, |n| n.get())
        ))
        .arg("--timeout=1200")
        .arg(format!("--json={}", json.display()));
    for path in &kunitconfigs {
        cmd.arg(format!("--kunitconfig={}", path.display()));
    }
    // The generated kunitconfig already has the mode's settings; UML's gets them here.
    let mode_settings = if args.arch == KunitArch::Um {
        args.mode.kconfig()
    } else {
        ""
    };
    if args.arch == KunitArch::Um && args.no_doctests {
        cmd.arg("--kconfig_add=CONFIG_RUST_KERNEL_DOCTESTS=n");
    }
    for line in mode_settings.lines() {
        if let Some(set) = line.strip_prefix("CONFIG_") {
            cmd.arg(format!("--kconfig_add=CONFIG_{set}"));
        } else if let Some(name) = line
            .strip_prefix("# ")
            .and_then(|l| l.strip_suffix(" is not set"))
        {
            cmd.arg(format!("--kconfig_add={name}=n"));
        }
    }
    // Two CPUs under QEMU, so that the tests run on an SMP kernel. UML runs on one: with
    // `ncpus=2` it stops with "SMP is not supported with PTRACE userspace".
    if args.arch != KunitArch::Um {
        cmd.arg("--qemu_args=-smp 2");
    }
    for var in &vars {
        cmd.arg(format!("--make_options={var}"));
    }
    hide_kvm(&mut cmd);

    let status = spawn_logged(&mut cmd, &format!("kunit.py {}", args.arch), &log, TIMEOUT)?;
    let text = fs::read_to_string(&json).with_context(|| {
        format!(
            "kunit.py wrote no results ({status}); it failed before the tests ran.\nLast lines:\n{}\nFull log: {}",
            tail(&log, 20),
            log.display()
        )
    })?;
    let suites = parse_json(&text).with_context(|| format!("reading {}", json.display()))?;
    print_suites(&suites);
    if !status.success() && suites.iter().all(|s| s.failed == 0) {
        bail!(
            "kunit.py failed ({status}) although no test failed; see {}",
            log.display()
        );
    }
    Ok(suites)
}

/// The settings that kunit.py's own QEMU configuration for `arch` adds to the kunitconfig
/// (the console, the machine): the `kconfig='''...'''` string of
/// `tools/testing/kunit/qemu_configs/<arch>.py`.
fn qemu_kconfig(src: &Path, arch: KunitArch) -> Result<String> {
    let path = src
        .join("tools/testing/kunit/qemu_configs")
        .join(format!("{}.py", arch.kernel_arch()));
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    kconfig_string(&text).with_context(|| {
        format!(
            "{} has no `kconfig='''...'''` string; kunit.py's QEMU configurations changed, so \
             the harness needs to learn their new form",
            path.display()
        )
    })
}

/// The `kconfig='''...'''` string of a kunit.py QEMU configuration, with a final newline.
fn kconfig_string(text: &str) -> Option<String> {
    let (_, rest) = text.split_once("kconfig='''")?;
    let (kconfig, _) = rest.split_once("'''")?;
    Some(format!("{}\n", kconfig.trim()))
}

/// The KUnit results of a boot whose suites are built in, from its console log through
/// `kunit.py parse --json`, as `run` reports them.
pub fn parse_boot_log(ctx: &Ctx, label: &str, log: &str) -> Result<Vec<Suite>> {
    let src = ctx.linux_src();
    let dir = ctx.work.join("kunit").join(label);
    fs::create_dir_all(&dir)?;
    let console = dir.join("console.log");
    fs::write(&console, log)?;
    let json = dir.join("results.json");
    let _ = fs::remove_file(&json);
    let mut cmd = Command::new("python3");
    cmd.current_dir(&src)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args(["tools/testing/kunit/kunit.py", "parse"])
        .arg(format!("--json={}", json.display()))
        .arg(&console);
    let parse_log = ctx.log(&format!("kunit-parse-{label}"))?;
    // kunit.py exits non-zero when a test failed; the JSON says which.
    let status = spawn_logged(
        &mut cmd,
        "kunit.py parse",
        &parse_log,
        Duration::from_secs(300),
    )?;
    let text = fs::read_to_string(&json).with_context(|| {
        format!(
            "kunit.py parse wrote no results ({status}); see {}",
            parse_log.display()
        )
    })?;
    let suites = parse_json(&text).with_context(|| format!("reading {}", json.display()))?;
    print_suites(&suites);
    Ok(suites)
}

fn print_suites(suites: &[Suite]) {
    for s in suites {
        eprintln!(
            "  {:<40} {:>4} passed {:>3} failed {:>3} skipped",
            s.name, s.passed, s.failed, s.skipped
        );
        for f in &s.failures {
            eprintln!("    FAILED {f}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_nested_groups_and_failures() {
        let text = r#"{"name": "KUnit Test Group", "sub_groups": [
            {"name": "a", "test_cases": [{"name": "x", "status": "PASS"}, {"name": "y", "status": "FAIL"}],
             "sub_groups": [{"name": "p", "test_cases": [{"name": "q", "status": "SKIP"}], "sub_groups": []}]},
            {"name": "b", "test_cases": [{"name": "z", "status": "ERROR"}], "sub_groups": []}],
            "test_cases": []}"#;
        let suites = parse_json(text).unwrap();
        assert_eq!(suites.len(), 2);
        assert_eq!(
            (suites[0].passed, suites[0].failed, suites[0].skipped),
            (1, 1, 1)
        );
        assert_eq!(suites[0].failures, ["a.y (FAIL)"]);
        assert_eq!(suites[1].failures, ["b.z (ERROR)"]);
    }

    /// kunit.py's JSON from a real x86_64 run (while a test of the series was being fixed).
    #[test]
    fn parses_a_real_run() {
        let suites = parse_json(include_str!("../fixtures/kunit-x86_64-report.json")).unwrap();
        let get = |name: &str| suites.iter().find(|s| s.name == name).unwrap();
        assert_eq!(suites.len(), 9);
        assert_eq!(get("rust_doctests_kernel").passed, 317);
        assert_eq!(
            (
                get("rust_kernel_kunit").passed,
                get("rust_kernel_kunit").skipped
            ),
            (2, 1)
        );
        let overflow = get("rust_overflow_report");
        assert_eq!((overflow.passed, overflow.failed), (16, 1));
        assert_eq!(overflow.failures, ["rust_overflow_report.mul (FAIL)"]);
    }

    #[test]
    fn reads_the_kconfig_of_a_qemu_configuration() {
        let text = "QEMU_ARCH = QemuArchParams(linux_arch='arm',\n\t\t\t   kconfig='''\nCONFIG_ARCH_VIRT=y\nCONFIG_SERIAL_AMBA_PL011=y''',\n\t\t\t   qemu_arch='arm')\n";
        assert_eq!(
            kconfig_string(text).as_deref(),
            Some("CONFIG_ARCH_VIRT=y\nCONFIG_SERIAL_AMBA_PL011=y\n")
        );
        assert_eq!(
            kconfig_string("QEMU_ARCH = QemuArchParams(linux_arch='um')"),
            None
        );
    }

    #[test]
    fn no_suites_is_an_error() {
        let text = r#"{"name": "KUnit Test Group", "sub_groups": [], "test_cases": []}"#;
        assert!(matches!(parse_json(text), Err(JsonError::NoSuites)));
        assert!(matches!(parse_json("{"), Err(JsonError::Malformed(_))));
    }
}
