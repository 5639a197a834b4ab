//! `setup`: Debian packages, Linux 7.2 from sid (or a local .deb), arm64 busybox, bindgen.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use crate::ctx::{Ctx, BINDGEN_VERSION, RUSTC_SRC};
use crate::run::{capture, run_logged, write_if_changed};

/// What the loop needs from Debian 12 (bookworm and bookworm-security).
pub const PACKAGES: &[&str] = &[
    "acpica-tools",
    "bc",
    "bison",
    "busybox-static",
    "ca-certificates",
    "clang-22",
    "cpio",
    "device-tree-compiler",
    "flex",
    "g++",
    "git",
    "ipxe-qemu",
    "kmod",
    "libclang-22-dev",
    "libelf-dev",
    "libssl-dev",
    "lld-22",
    "llvm-22",
    "llvm-22-dev",
    // opt and FileCheck, for the IR tests of the rustc series' LLVM passes.
    "llvm-22-tools",
    "make",
    "python3",
    "python3-git",
    "python3-ply",
    "qemu-system-arm",
    // qemu-system-riscv64, for KUnit on riscv.
    "qemu-system-misc",
    "qemu-system-x86",
    // qemu-aarch64, which runs conformance/aarch64_merged.rs.
    "qemu-user",
    "rust-web-src",
    "rustc-web",
    "seabios",
    "valgrind",
    "xz-utils",
];

const SID_SOURCE: &str = "/etc/apt/sources.list.d/overflow-harness-sid.sources";
const SID_PIN: &str = "/etc/apt/preferences.d/overflow-harness-sid";
const MIN: Duration = Duration::from_secs(60);

pub fn run(ctx: &Ctx) -> Result<()> {
    check_platform()?;
    install_packages(ctx)?;
    linux_deb(ctx)?;
    busybox_arm64(ctx)?;
    bindgen(ctx)?;
    fetch_bench_crates(ctx)?;
    check_versions()?;
    eprintln!("setup: complete");
    Ok(())
}

/// Downloads the crates of `bench/crates/Cargo.lock` into cargo's cache, so that `bench` builds
/// them without asking crates.io again.
fn fetch_bench_crates(ctx: &Ctx) -> Result<()> {
    let mut cmd = Command::new("cargo");
    cmd.arg("fetch")
        .arg("--locked")
        .arg("--manifest-path")
        .arg(ctx.repo.join("bench/crates/Cargo.toml"));
    run_logged(
        cmd,
        "bench-crates-fetch",
        &ctx.log("bench-crates-fetch")?,
        Duration::from_secs(10 * 60),
    )
    .context("fetching the crates of bench/crates from crates.io failed")
}

fn check_platform() -> Result<()> {
    let os = fs::read_to_string("/etc/os-release").unwrap_or_default();
    if !os.lines().any(|l| l == "ID=debian") || !os.lines().any(|l| l == "VERSION_ID=\"12\"") {
        bail!(
            "setup supports Debian 12 (bookworm) only; /etc/os-release says:\n{}\n\
             Install the packages listed in harness/src/setup.rs by hand on other systems.",
            os.lines()
                .filter(|l| l.starts_with("PRETTY_NAME"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    // SAFETY: `geteuid` has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        bail!("setup installs packages with apt-get and must run as root (try `sudo`)");
    }
    check_dev_null()
}

/// Fails if `/dev/null` is not the null device. A root process that writes a file to
/// `/dev/null` by renaming over it (as `rustc -o /dev/null` does) leaves a regular file there,
/// which fills with whatever is redirected to it; the kernel's `rustc-option` Kconfig probes,
/// which compile `/dev/null`, then fail, and options such as `CONFIG_RUST_OVERFLOW_REPORT`
/// silently disappear from the configuration.
fn check_dev_null() -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let meta = fs::metadata("/dev/null").context("reading /dev/null")?;
    if !meta.file_type().is_char_device() {
        bail!(
            "/dev/null is not the null device but a {} (a root process renamed a file over it); \
             restore it with `rm /dev/null && mknod -m 666 /dev/null c 1 3` and run again",
            if meta.is_file() {
                "regular file"
            } else {
                "file of another kind"
            }
        );
    }
    Ok(())
}

fn is_installed(package: &str) -> bool {
    let mut cmd = Command::new("dpkg-query");
    cmd.args(["-W", "-f=${Status}", package]);
    capture(cmd, MIN)
        .map(|s| s.contains("install ok installed"))
        .unwrap_or(false)
}

fn apt_get(ctx: &Ctx, label: &str, args: &[&str], cwd: Option<&Path>) -> Result<()> {
    let mut cmd = Command::new("apt-get");
    cmd.env("DEBIAN_FRONTEND", "noninteractive").args(args);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    run_logged(cmd, label, &ctx.log(label)?, 30 * MIN)
}

fn install_packages(ctx: &Ctx) -> Result<()> {
    let missing: Vec<&str> = PACKAGES
        .iter()
        .copied()
        .filter(|p| !is_installed(p))
        .collect();
    if missing.is_empty() {
        eprintln!(
            "setup: all {} Debian packages are installed",
            PACKAGES.len()
        );
        return Ok(());
    }
    eprintln!("setup: installing {}", missing.join(" "));
    apt_get(ctx, "apt-update", &["update"], None)?;
    let mut args = vec!["install", "-y", "--no-install-recommends"];
    args.extend(&missing);
    apt_get(ctx, "apt-install", &args, None).context(
        "installing the packages failed; if apt says a package cannot be located, it left the \
         bookworm archive: look for its replacement with `apt-cache search` and update \
         PACKAGES in harness/src/setup.rs",
    )
}

/// The Linux 7.2 source package, verified, in the work directory.
pub fn linux_deb_path(ctx: &Ctx) -> Result<PathBuf> {
    let dir = ctx.work.join("linux/deb");
    let mut debs: Vec<PathBuf> = fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "deb"))
        .collect();
    debs.sort();
    debs.pop()
        .with_context(|| format!("no linux-source-7.2 .deb in {}; run `setup`", dir.display()))
}

fn linux_deb(ctx: &Ctx) -> Result<()> {
    let dir = ctx.work.join("linux/deb");
    fs::create_dir_all(&dir)?;
    if let Some(local) = &ctx.linux_deb {
        let sums = match &ctx.linux_sha256sums {
            Some(s) => s.clone(),
            None => local.with_file_name("SHA256SUMS"),
        };
        verify_sha256(local, &sums)?;
        let name = local.file_name().context("--linux-deb has no file name")?;
        let dest = dir.join(name);
        if !dest.exists() {
            for old in fs::read_dir(&dir)?.flatten() {
                fs::remove_file(old.path())?;
            }
            fs::copy(local, &dest)
                .with_context(|| format!("copying {} to {}", local.display(), dest.display()))?;
        }
    } else if linux_deb_path(ctx).is_err() {
        add_sid_source(ctx)?;
        apt_get(
            ctx,
            "apt-download-linux",
            &["download", "linux-source-7.2"],
            Some(&dir),
        )
        .context(
            "downloading linux-source-7.2 from sid failed; pass a local copy with --linux-deb",
        )?;
    }
    let deb = linux_deb_path(ctx)?;
    let mut cmd = Command::new("dpkg-deb");
    cmd.args(["-f"]).arg(&deb).args(["Package", "Version"]);
    let fields = capture(cmd, MIN)?;
    if !fields.contains("Package: linux-source-7.2") || !fields.contains("Version: 7.2.") {
        bail!(
            "{} is not a linux-source-7.2 package (dpkg-deb says:\n{fields}); the series is \
             for Linux 7.2: pass the right .deb with --linux-deb",
            deb.display()
        );
    }
    eprintln!("setup: Linux source package {}", deb.display());
    Ok(())
}

/// Checks `file` against its line in a `sha256sum`-style list.
pub fn verify_sha256(file: &Path, sums: &Path) -> Result<()> {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .context("bad .deb path")?;
    let list = fs::read_to_string(sums).with_context(|| {
        format!(
            "reading {}; pass the checksum list with --linux-sha256sums",
            sums.display()
        )
    })?;
    let expected = list
        .lines()
        .filter_map(|l| l.split_once(char::is_whitespace))
        .find(|(_, n)| n.trim().trim_start_matches('*') == name)
        .map(|(sum, _)| sum.to_ascii_lowercase())
        .with_context(|| format!("{} has no line for {name}", sums.display()))?;
    let data = fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let actual = hex(&Sha256::digest(&data));
    if actual != expected {
        bail!("{} has SHA256 {actual}, but {} says {expected}; the file is corrupt or not the expected version",
            file.display(), sums.display());
    }
    Ok(())
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn add_sid_source(ctx: &Ctx) -> Result<()> {
    let source = "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: sid\nComponents: main\n\
                  Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n";
    let pin = "Package: *\nPin: release n=sid\nPin-Priority: 100\n";
    let changed = write_if_changed(Path::new(SID_PIN), pin.as_bytes())?
        | write_if_changed(Path::new(SID_SOURCE), source.as_bytes())?;
    if changed {
        apt_get(ctx, "apt-update-sid", &["update"], None)?;
    }
    Ok(())
}

fn busybox_arm64(ctx: &Ctx) -> Result<()> {
    let target = ctx.busybox(crate::ctx::Arch::Arm64);
    if target.exists() {
        return Ok(());
    }
    let mut cmd = Command::new("dpkg");
    cmd.arg("--print-foreign-architectures");
    if !capture(cmd, MIN)?.lines().any(|a| a == "arm64") {
        // Only package lists: no arm64 package gets installed.
        let mut cmd = Command::new("dpkg");
        cmd.args(["--add-architecture", "arm64"]);
        capture(cmd, MIN)?;
        apt_get(ctx, "apt-update-arm64", &["update"], None)?;
    }
    let tmp = ctx.work.join("busybox-arm64.tmp");
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp)?;
    apt_get(
        ctx,
        "apt-download-busybox-arm64",
        &["download", "busybox-static:arm64"],
        Some(&tmp),
    )?;
    let deb = fs::read_dir(&tmp)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "deb"))
        .context("apt-get download busybox-static:arm64 produced no .deb")?;
    let mut cmd = Command::new("dpkg-deb");
    cmd.arg("-x").arg(&deb).arg(tmp.join("root"));
    capture(cmd, MIN)?;
    let found = ["bin/busybox", "usr/bin/busybox"]
        .iter()
        .map(|p| tmp.join("root").join(p))
        .find(|p| p.exists())
        .context("busybox-static:arm64 has no bin/busybox")?;
    fs::create_dir_all(target.parent().unwrap())?;
    fs::copy(&found, &target)?;
    fs::remove_dir_all(&tmp)?;
    Ok(())
}

fn bindgen(ctx: &Ctx) -> Result<()> {
    let bin = ctx.bindgen();
    let mut cmd = Command::new(&bin);
    cmd.arg("--version");
    if capture(cmd, MIN).is_ok_and(|v| v.contains(BINDGEN_VERSION)) {
        return Ok(());
    }
    let mut cmd = Command::new("cargo");
    cmd.env("LIBCLANG_PATH", "/usr/lib/llvm-22/lib")
        .args(["install", "--locked", "--force"])
        .arg(format!("bindgen-cli@{BINDGEN_VERSION}"))
        .arg("--root")
        .arg(ctx.work.join("bindgen"));
    run_logged(
        cmd,
        "bindgen-install",
        &ctx.log("bindgen-install")?,
        20 * MIN,
    )
}

fn check_versions() -> Result<()> {
    let checks: &[(&str, &[&str], &str)] = &[
        ("clang-22", &["--version"], "version 22."),
        ("ld.lld-22", &["--version"], "LLD 22."),
        ("qemu-system-x86_64", &["--version"], "QEMU emulator"),
        ("qemu-system-aarch64", &["--version"], "QEMU emulator"),
        ("qemu-system-arm", &["--version"], "QEMU emulator"),
        ("qemu-system-riscv64", &["--version"], "QEMU emulator"),
        ("qemu-aarch64", &["--version"], "qemu-aarch64 version"),
        ("python3", &["--version"], "Python 3"),
    ];
    for (tool, args, expect) in checks {
        let mut cmd = Command::new(tool);
        cmd.args(*args);
        let out = capture(cmd, MIN).with_context(|| format!("{tool} is missing after setup"))?;
        if !out.contains(expect) {
            bail!(
                "{tool} {} printed {:?}, expected {expect:?}",
                args.join(" "),
                out.lines().next()
            );
        }
    }
    if !Path::new(RUSTC_SRC).join("x.py").exists() {
        bail!("{RUSTC_SRC}/x.py is missing; is rust-web-src 1.96.0 installed? (`apt-get install rust-web-src`)");
    }
    Ok(())
}
