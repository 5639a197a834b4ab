//! `boot`: a built kernel in QEMU (TCG) with a busybox initramfs that loads the built modules.

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::ctx::{Arch, Ctx, Mode};
use crate::kernel;
use crate::run::{spawn_logged, tail, Lock};
use crate::warn::{self, Console};

const DONE: &str = "overflow-harness: done";
const DMESG_BEGIN: &str = "overflow-harness: dmesg begin";
const DMESG_END: &str = "overflow-harness: dmesg end";

#[derive(clap::Args, Clone)]
pub struct Args {
    #[arg(long, value_enum, default_value_t)]
    pub arch: Arch,
    #[arg(long, value_enum, default_value_t)]
    pub mode: Mode,
    /// Extra kernel command-line parameters (repeatable), e.g. `panic_on_warn=1`.
    #[arg(long = "cmdline")]
    pub cmdline: Vec<String>,
    /// The boot is expected to end in a kernel panic (e.g. with `panic_on_warn=1`).
    #[arg(long)]
    pub expect_panic: bool,
    /// Seconds before QEMU is killed.
    #[arg(long, default_value_t = DEFAULT_TIMEOUT)]
    pub timeout: u64,
    /// A shell script for the guest's busybox `sh`, run after the modules are loaded and before
    /// `dmesg` is printed.
    #[arg(long, value_name = "FILE", value_parser = read_script)]
    pub script: Option<String>,
    /// Modules built elsewhere, copied to `/extra` in the initramfs and not loaded at boot.
    #[arg(skip)]
    pub extra_modules: Vec<PathBuf>,
    /// Whether `/init` loads every module of `/modules` before the script (the script may load
    /// them itself instead).
    #[arg(skip = true)]
    pub load_modules: bool,
    /// More QEMU arguments (devices, `-acpitable`, `-dtb`).
    #[arg(skip)]
    pub qemu_args: Vec<String>,
    /// Virtual CPUs.
    #[arg(skip = 2u32)]
    pub smp: u32,
}

fn read_script(path: &str) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("cannot read the script {path}: {e}"))
}

const DEFAULT_TIMEOUT: u64 = 300;

impl Default for Args {
    fn default() -> Self {
        Args {
            arch: Arch::default(),
            mode: Mode::default(),
            cmdline: Vec::new(),
            expect_panic: false,
            timeout: DEFAULT_TIMEOUT,
            script: None,
            extra_modules: Vec::new(),
            load_modules: true,
            qemu_args: Vec::new(),
            smp: 2,
        }
    }
}

pub struct Boot {
    pub console_log: PathBuf,
    pub console: Console,
    /// The kernel log as `dmesg` printed it from userspace (empty if it never got there).
    pub dmesg: String,
}

impl Boot {
    /// What the kernel printed on the console before userspace dumped `dmesg`: the log of a
    /// boot whose built-in KUnit suites ran, for `kunit.py parse`.
    pub fn console_before_dmesg(&self) -> Result<String> {
        let text = fs::read_to_string(&self.console_log)
            .with_context(|| format!("reading {}", self.console_log.display()))?;
        Ok(match text.split_once(DMESG_BEGIN) {
            Some((before, _)) => before.to_string(),
            None => text,
        })
    }

    pub fn summary(&self) -> String {
        let mut out = format!("console log: {}\n", self.console_log.display());
        out += &format!("{} WARN report(s)\n", self.console.warns.len());
        for (i, w) in self.console.warns.iter().enumerate() {
            out += &format!(
                "  #{}: {} {} (at {}, CPU#{}{})\n",
                i + 1,
                w.site(),
                w.message.as_deref().unwrap_or("(no overflow message)"),
                w.caller.as_deref().unwrap_or("?"),
                w.cpu.map_or("?".into(), |c| c.to_string()),
                if w.complete {
                    ""
                } else {
                    ", no end-of-trace marker"
                },
            );
        }
        if let Some(reason) = &self.console.panic {
            out += &format!("kernel panic: {reason}\n");
        }
        out
    }
}

fn init_script(script: &str, load_modules: bool) -> String {
    let load = if load_modules {
        r#"for m in /modules/*.ko; do
    [ -e "$m" ] || continue
    echo "overflow-harness: insmod ${m##*/}"
    insmod "$m" || echo "overflow-harness: insmod ${m##*/} failed"
done"#
    } else {
        ""
    };
    format!(
        r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
echo "overflow-harness: userspace up"
{load}
{script}
# Keep the kernel's own console lines (a late `tsc:` line, say) from splitting the dump's.
dmesg -n 1
echo "{DMESG_BEGIN}"
dmesg
echo "{DMESG_END}"
echo "{DONE}"
reboot -f
"#
    )
}

/// The loadable modules of a build directory, sorted by name.
fn modules(out: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![out.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "ko") {
                found.push(path);
            }
        }
    }
    found.sort_by_key(|p| p.file_name().map(|n| n.to_os_string()));
    found
}

/// Writes a newc initramfs with busybox, `/init`, the modules and the extra modules.
fn initramfs(ctx: &Ctx, args: &Args, out: &Path, dir: &Path) -> Result<PathBuf> {
    let (arch, script) = (args.arch, args.script.as_deref().unwrap_or_default());
    let root = dir.join("initramfs");
    let _ = fs::remove_dir_all(&root);
    for sub in ["bin", "modules", "extra", "proc", "sys", "dev", "tmp"] {
        fs::create_dir_all(root.join(sub))?;
    }
    let busybox = ctx.busybox(arch);
    fs::copy(&busybox, root.join("bin/busybox"))
        .with_context(|| format!("copying {}; run `setup`", busybox.display()))?;
    fs::write(root.join("init"), init_script(script, args.load_modules))?;
    fs::set_permissions(root.join("init"), fs::Permissions::from_mode(0o755))?;
    for module in modules(out) {
        fs::copy(
            &module,
            root.join("modules").join(module.file_name().unwrap()),
        )?;
    }
    for module in &args.extra_modules {
        let name = module
            .file_name()
            .with_context(|| format!("{} is not a module file", module.display()))?;
        fs::copy(module, root.join("extra").join(name))
            .with_context(|| format!("copying {}", module.display()))?;
    }

    let mut entries = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(rel) = dirs.pop() {
        for entry in fs::read_dir(root.join(&rel))?.flatten() {
            let rel = rel.join(entry.file_name());
            if entry.file_type()?.is_dir() {
                dirs.push(rel.clone());
            }
            entries.push(rel);
        }
    }
    entries.sort();
    let cpio = dir.join("initramfs.cpio");
    let mut child = Command::new("cpio")
        .args(["--quiet", "-o", "-H", "newc", "-R", "0:0"])
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(File::create(&cpio)?)
        .spawn()
        .context("running cpio; run `setup`")?;
    let mut stdin = child.stdin.take().unwrap();
    for e in &entries {
        writeln!(stdin, "{}", e.display())?;
    }
    drop(stdin);
    if !child.wait()?.success() {
        bail!("cpio failed to write {}", cpio.display());
    }
    Ok(cpio)
}

/// The QEMU command line of a boot, without `Args::qemu_args`.
/// QEMU's arguments for a display that the bochs DRM driver binds, so that drm_panic has a plane
/// to draw on: the standard VGA on x86_64, `bochs-display` on arm64's PCIe.
pub fn bochs_display(arch: Arch) -> [&'static str; 2] {
    match arch {
        Arch::X86_64 => ["-vga", "std"],
        Arch::Arm64 => ["-device", "bochs-display"],
    }
}

pub fn qemu(arch: Arch, image: &Path, initrd: &Path, cmdline: &str, smp: u32) -> Command {
    let mut cmd = match arch {
        Arch::X86_64 => Command::new("qemu-system-x86_64"),
        Arch::Arm64 => {
            let mut cmd = Command::new("qemu-system-aarch64");
            cmd.args(["-machine", "virt", "-cpu", "max"]);
            cmd
        }
    };
    cmd.args(["-accel", "tcg", "-m", "1024", "-nographic", "-no-reboot"])
        .arg("-smp")
        .arg(smp.to_string())
        .arg("-kernel")
        .arg(image)
        .arg("-initrd")
        .arg(initrd)
        .args(["-append", cmdline]);
    cmd
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<Boot> {
    let out = kernel::completed_build(ctx, args.arch, args.mode)?;
    let label = format!("boot-{}-{}", args.arch, args.mode);
    boot_build(ctx, &out, args, &label)
}

/// Boots the kernel in build directory `out` (the mode in `args` only names the logs).
pub fn boot_build(ctx: &Ctx, out: &Path, args: &Args, label: &str) -> Result<Boot> {
    let dir = ctx.work.join("boot").join(label);
    fs::create_dir_all(&dir)?;
    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    let initrd = initramfs(ctx, args, out, &dir)?;
    let console = match args.arch {
        Arch::X86_64 => "console=ttyS0",
        Arch::Arm64 => "console=ttyAMA0",
    };
    let mut cmdline = vec![console.to_string(), "panic=-1".into()];
    cmdline.extend(args.cmdline.iter().cloned());
    let mut cmd = qemu(
        args.arch,
        &out.join(args.arch.image()),
        &initrd,
        &cmdline.join(" "),
        args.smp,
    );
    cmd.args(&args.qemu_args);

    let log = ctx.log(label)?;
    let status = spawn_logged(&mut cmd, &format!("QEMU {}", args.arch), &log, Duration::from_secs(args.timeout))
        .with_context(|| {
            format!("the kernel did not finish booting; if the log is empty, QEMU or the kernel's console is broken ({})", log.display())
        })?;
    let text = fs::read_to_string(&log).unwrap_or_default();
    let dmesg = text
        .split_once(DMESG_BEGIN)
        .and_then(|(_, rest)| rest.split_once(DMESG_END))
        .map(|(d, _)| d.trim().to_string())
        .unwrap_or_default();
    // Parse what userspace's dmesg printed if it got that far, else the live console.
    let console = warn::parse(if dmesg.is_empty() { &text } else { &dmesg });
    let boot = Boot {
        console_log: log.clone(),
        console,
        dmesg,
    };
    fs::write(
        dir.join("warns.json"),
        serde_json::to_string_pretty(&boot.console)?,
    )?;
    eprint!("{}", boot.summary());

    match (&boot.console.panic, args.expect_panic) {
        (Some(reason), false) => bail!(
            "unexpected kernel panic: {reason}\nConsole log: {}",
            log.display()
        ),
        (None, true) => bail!(
            "expected a kernel panic, but the boot ended without one; console log: {}",
            log.display()
        ),
        (Some(_), true) => return Ok(boot),
        (None, false) => {}
    }
    if !status.success() || !text.contains(DONE) {
        bail!(
            "the boot did not reach `{DONE}` ({status}); last console lines:\n{}\nConsole log: {}",
            tail(&log, 15),
            log.display()
        );
    }
    Ok(boot)
}
