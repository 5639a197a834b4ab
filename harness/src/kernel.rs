//! `tree` and `build`: the Linux 7.2 work tree and kernel builds per architecture and mode.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::ctx::{Arch, Ctx, Mode};
use crate::patches;
use crate::run::{capture, run_logged, Lock};
use crate::setup;

const MAKE_TIMEOUT: Duration = Duration::from_secs(75 * 60);
/// Written into a build directory once `make` succeeded for the tree's HEAD and configuration.
const COMPLETE: &str = ".overflow-harness-complete";

#[derive(clap::Args, Default)]
pub struct TreeArgs {}

pub fn tree(ctx: &Ctx, _args: &TreeArgs) -> Result<PathBuf> {
    let src = ctx.linux_src();
    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    if !src.join(".git").exists() {
        unpack(ctx, &src)?;
    }
    patches::sync(ctx, &src, &patches::stack(&ctx.repo, patches::Which::Linux))?;
    Ok(src)
}

fn unpack(ctx: &Ctx, src: &Path) -> Result<()> {
    let deb = setup::linux_deb_path(ctx)?;
    let tmp = ctx.work.join("linux/unpack.tmp");
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp)?;
    let log = ctx.log("linux-unpack")?;
    let mut cmd = Command::new("dpkg-deb");
    cmd.arg("-x").arg(&deb).arg(tmp.join("deb"));
    run_logged(cmd, "dpkg-deb -x", &log, Duration::from_secs(600))?;
    let tarball = fs::read_dir(tmp.join("deb/usr/src"))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".tar.xz"))
        .with_context(|| format!("{} holds no linux-source tarball", deb.display()))?;
    let mut cmd = Command::new("tar");
    cmd.arg("-C").arg(&tmp).arg("-xf").arg(&tarball);
    run_logged(cmd, "tar -x", &log, Duration::from_secs(900))?;
    let top = fs::read_dir(&tmp)?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("linux-source"))
        })
        .context("the tarball has no linux-source-* directory")?;

    let makefile =
        fs::read_to_string(top.join("Makefile")).context("the tarball has no Makefile")?;
    let field = |name: &str| {
        makefile
            .lines()
            .find_map(|l| {
                l.strip_prefix(name)?
                    .trim()
                    .strip_prefix('=')
                    .map(|v| v.trim().to_string())
            })
            .unwrap_or_default()
    };
    let version = format!(
        "{}.{}.{}",
        field("VERSION"),
        field("PATCHLEVEL"),
        field("SUBLEVEL")
    );
    if !version.starts_with("7.2.") {
        bail!("{} contains Linux {version}, but the series is for Linux 7.2; pass a linux-source-7.2 package", deb.display());
    }

    // Debian's .gitignore ignores every top-level entry; new files must show up in git status.
    let gitignore = top.join(".gitignore");
    let text = fs::read_to_string(&gitignore).unwrap_or_default();
    if let Some(start) = text.find("#\n# Debian packaging") {
        fs::write(&gitignore, &text[..start])?;
    }
    let deb_name = deb.file_name().unwrap().to_string_lossy();
    patches::init_pristine(
        ctx,
        &top,
        &format!(
            "Linux {version} from {deb_name}\n\nDebian's top-level ignore-everything block is \
             dropped from .gitignore so that new files show up in git status."
        ),
    )?;
    fs::rename(&top, src)?;
    fs::remove_dir_all(&tmp)?;
    Ok(())
}

#[derive(clap::Args, Default, Clone)]
pub struct BuildArgs {
    #[arg(long, value_enum, default_value_t)]
    pub arch: Arch,
    #[arg(long, value_enum, default_value_t)]
    pub mode: Mode,
}

/// Whether the tree defines a Kconfig symbol (e.g. whether the series provides report mode).
pub fn has_kconfig(src: &Path, symbol: &str) -> bool {
    let needle = format!("config {symbol}\n");
    [
        "lib/Kconfig.debug",
        "init/Kconfig",
        "samples/rust/Kconfig",
        "rust/kernel/Kconfig.test",
    ]
    .iter()
    .any(|f| fs::read_to_string(src.join(f)).is_ok_and(|t| t.contains(&needle)))
}

/// The toolchain the kernel is built with: the last one `toolchain` installed.
pub fn current_toolchain(ctx: &Ctx) -> Result<PathBuf> {
    let link = ctx.toolchain_current();
    let dir = fs::canonicalize(&link)
        .with_context(|| format!("{} is missing; run `toolchain` first", link.display()))?;
    if !dir.join(".complete").exists() {
        bail!(
            "{} is not a complete toolchain; run `toolchain` again",
            dir.display()
        );
    }
    Ok(dir)
}

/// The commit the tree is at.
pub fn head(src: &Path) -> Result<String> {
    let mut cmd = patches::git(src);
    cmd.args(["rev-parse", "HEAD"]);
    Ok(capture(cmd, Duration::from_secs(60))?.trim().to_string())
}

/// The configuration fragment for a build, from `configs/` and the mode. In report mode, the
/// x86_64 kernel is also what `test` runs KUnit on for x86_64: it has the sample and every Rust
/// KUnit suite built in (`configs/kunit/rust.kunitconfig`).
fn fragment(ctx: &Ctx, arch: Arch, mode: Mode) -> Result<String> {
    let mut files = vec![
        "kernel/base.config".to_string(),
        format!("kernel/{arch}.config"),
    ];
    if mode == Mode::Report {
        files.push("kernel/demo-report.config".into());
        files.push("kunit/rust.kunitconfig".into());
    }
    read_fragment(ctx, &files, mode)
}

/// The files of `configs/` named by `files` (`kernel/base.config`, ...), in order, and the
/// mode's settings.
pub fn read_fragment(ctx: &Ctx, files: &[String], mode: Mode) -> Result<String> {
    let dir = ctx.repo.join("configs");
    let mut text = String::new();
    for name in files {
        let path = dir.join(name);
        text +=
            &fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    }
    text += mode.kconfig();
    Ok(text)
}

/// The `CONFIG_*` settings a fragment asks for that `.config` does not have.
pub fn missing_options(fragment: &str, config: &str) -> Vec<String> {
    let set: std::collections::HashSet<&str> = config.lines().collect();
    fragment
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("CONFIG_") || l.starts_with("# CONFIG_"))
        .filter(|wanted| {
            if let Some(name) = wanted
                .strip_prefix("# ")
                .and_then(|l| l.strip_suffix(" is not set"))
            {
                // Unset also holds when the option does not exist.
                config.lines().any(|l| l.starts_with(&format!("{name}=")))
            } else {
                !set.contains(wanted)
            }
        })
        .map(str::to_string)
        .collect()
}

/// Configures and builds the kernel; returns the build directory.
pub fn build(ctx: &Ctx, args: &BuildArgs) -> Result<PathBuf> {
    let src = ctx.linux_src();
    if !src.join(".git").exists() {
        bail!("{} does not exist; run `tree` first", src.display());
    }
    let toolchain = current_toolchain(ctx)?;
    if args.mode == Mode::Report && !has_kconfig(&src, "RUST_OVERFLOW_REPORT") {
        bail!("the tree has no CONFIG_RUST_OVERFLOW_REPORT: patches/linux does not provide report mode yet; build with --mode panic");
    }
    let out = ctx.build_dir(args.arch, args.mode);
    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    let _ = fs::remove_file(out.join(COMPLETE));
    let fragment = fragment(ctx, args.arch, args.mode)?;
    let label = format!("build-{}-{}", args.arch, args.mode);
    make_kernel(
        ctx,
        &src,
        &out,
        args.arch,
        &ctx.make_vars(&toolchain),
        &fragment,
        Base::AllNo,
        &label,
    )?;
    fs::write(
        out.join(COMPLETE),
        format!("{}\n{}\n", head(&src)?, toolchain.display()),
    )?;
    Ok(out)
}

/// What a fragment is applied to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// Every other option at its default (`make olddefconfig`), as `kunit.py` configures.
    Defaults,
    /// Every other option off where it can be (`make allnoconfig` with the fragment as
    /// `KCONFIG_ALLCONFIG`): a smaller kernel for `test` and `check` (on arm64 with the Rust
    /// KUnit suites, 474 options set instead of 679).
    AllNo,
}

/// Configures `out` from `fragment` on `base`, and checks that every option of the fragment
/// took. `arch` is the kernel's `ARCH`.
pub fn configure(
    src: &Path,
    out: &Path,
    arch: &str,
    vars: &[String],
    fragment: &str,
    base: Base,
    log: &Path,
) -> Result<()> {
    fs::create_dir_all(out)?;
    let _ = fs::remove_file(out.join(".config"));
    let cmd = match base {
        Base::Defaults => {
            fs::write(out.join(".config"), fragment)?;
            make_arch(src, out, arch, vars, &["olddefconfig"])
        }
        Base::AllNo => {
            let path = out.join(".overflow-harness-fragment");
            fs::write(&path, fragment)?;
            let mut cmd = make_arch(src, out, arch, vars, &["allnoconfig"]);
            cmd.arg(format!("KCONFIG_ALLCONFIG={}", path.display()));
            cmd
        }
    };
    run_logged(cmd, &format!("configure ({base:?})"), log, MAKE_TIMEOUT)?;
    let config = fs::read_to_string(out.join(".config"))?;
    let missing = missing_options(fragment, &config);
    if !missing.is_empty() {
        bail!(
            "the kernel configuration does not have {} (a dependency is missing or the toolchain \
             lacks a feature; see `make O={} menuconfig` and {})",
            missing.join(", "),
            out.display(),
            log.display()
        );
    }
    Ok(())
}

/// Configures `out` from `fragment` on `base`, checks that every option of the fragment took,
/// and builds the kernel and its modules. The caller holds the heavy lock.
#[allow(clippy::too_many_arguments)]
pub fn make_kernel(
    ctx: &Ctx,
    src: &Path,
    out: &Path,
    arch: Arch,
    vars: &[String],
    fragment: &str,
    base: Base,
    label: &str,
) -> Result<()> {
    let log = ctx.log(label)?;
    configure(src, out, arch.kernel_arch(), vars, fragment, base, &log)?;
    run_logged(
        make(src, out, arch, vars, &["all"]),
        &format!("make ({label})"),
        &log,
        MAKE_TIMEOUT,
    )
}

/// Builds the external modules in `source` (a directory of the repository with a `Kbuild`) with
/// `make M=` against the build in `out`, in a fresh copy at `dir`, so that the build's objects
/// stay out of the repository. The caller holds the heavy lock.
pub fn build_external_modules(
    ctx: &Ctx,
    toolchain: &Path,
    out: &Path,
    arch: Arch,
    source: &Path,
    dir: &Path,
    label: &str,
) -> Result<()> {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir)?;
    for entry in fs::read_dir(source).with_context(|| format!("reading {}", source.display()))? {
        let from = entry?.path();
        if from.is_file() {
            fs::copy(&from, dir.join(from.file_name().unwrap()))
                .with_context(|| format!("copying {}", from.display()))?;
        }
    }
    let module_dir = format!("M={}", dir.display());
    let cmd = make(
        &ctx.linux_src(),
        out,
        arch,
        &ctx.make_vars(toolchain),
        &[&module_dir, "modules"],
    );
    run_logged(
        cmd,
        &format!("make M={} modules", source.display()),
        &ctx.log(label)?,
        Duration::from_secs(600),
    )
}

/// `make -C src O=out ARCH=arch vars... -jN targets...`.
pub fn make(src: &Path, out: &Path, arch: Arch, vars: &[String], targets: &[&str]) -> Command {
    make_arch(src, out, arch.kernel_arch(), vars, targets)
}

/// [`make`] for any kernel `ARCH`, also those the rest of the harness does not boot.
pub fn make_arch(src: &Path, out: &Path, arch: &str, vars: &[String], targets: &[&str]) -> Command {
    let mut cmd = Command::new("make");
    cmd.arg("-C")
        .arg(src)
        .arg(format!("O={}", out.display()))
        .arg(format!("ARCH={arch}"))
        .args(vars)
        .arg(format!(
            "-j{}",
            std::thread::available_parallelism().map_or(2, |n| n.get())
        ))
        .args(targets);
    cmd
}

/// The build directory, if its last build succeeded for the tree's current HEAD.
pub fn completed_build(ctx: &Ctx, arch: Arch, mode: Mode) -> Result<PathBuf> {
    let out = ctx.build_dir(arch, mode);
    let marker = fs::read_to_string(out.join(COMPLETE)).unwrap_or_default();
    let head = head(&ctx.linux_src())?;
    if marker.lines().next() != Some(head.as_str()) {
        bail!(
            "no complete {arch} {mode} build of the tree's HEAD in {}; run `build --arch {arch} --mode {mode}`",
            out.display()
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::missing_options;

    #[test]
    fn missing_options_reports_unset_and_wrongly_set() {
        let fragment = "CONFIG_A=y\nCONFIG_B=m\n# CONFIG_C is not set\n# CONFIG_D is not set\n";
        let config = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=y\n";
        assert_eq!(
            missing_options(fragment, config),
            ["CONFIG_B=m", "# CONFIG_C is not set"]
        );
    }
}
