//! Paths of the work directory, architectures and overflow-checks modes.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::ValueEnum;

/// The rustc source that the toolchain is built from (Debian's `rust-web-src`).
pub const RUSTC_SRC: &str = "/usr/src/rustc-1.96.0";
/// The LLVM suffix for `make LLVM=...` and the LLVM the toolchain links against.
pub const LLVM_SUFFIX: &str = "-22";
pub const LLVM_CONFIG: &str = "/usr/lib/llvm-22/bin/llvm-config";
/// The stage0 toolchain used to build rustc (installed by rustup on these machines).
pub const STAGE0: &str = "1.95.0";
/// The bindgen-cli version installed by `setup`.
pub const BINDGEN_VERSION: &str = "0.73.2";

pub struct Ctx {
    /// The repository (patches, configs, conformance programs).
    pub repo: PathBuf,
    /// The work directory (sources, builds, toolchains, logs).
    pub work: PathBuf,
    pub linux_deb: Option<PathBuf>,
    pub linux_sha256sums: Option<PathBuf>,
}

impl Ctx {
    pub fn new(
        work: PathBuf,
        linux_deb: Option<PathBuf>,
        linux_sha256sums: Option<PathBuf>,
    ) -> Result<Ctx> {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .context("the harness crate has no parent directory")?
            .to_path_buf();
        fs::create_dir_all(&work)
            .with_context(|| format!("creating the work directory {}", work.display()))?;
        let work = work.canonicalize()?;
        Ok(Ctx {
            repo,
            work,
            linux_deb,
            linux_sha256sums,
        })
    }

    /// A fresh log file for one step.
    pub fn log(&self, name: &str) -> Result<PathBuf> {
        let dir = self.work.join("logs");
        fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{name}.log"));
        let _ = fs::remove_file(&path);
        Ok(path)
    }

    pub fn heavy_lock(&self) -> PathBuf {
        self.work.join("heavy.lock")
    }

    pub fn rustc_dir(&self) -> PathBuf {
        self.work.join("rustc")
    }

    pub fn linux_src(&self) -> PathBuf {
        self.work.join("linux/src")
    }

    pub fn toolchain_current(&self) -> PathBuf {
        self.work.join("toolchain-current")
    }

    pub fn bindgen(&self) -> PathBuf {
        self.work.join("bindgen/bin/bindgen")
    }

    pub fn busybox(&self, arch: Arch) -> PathBuf {
        match arch {
            Arch::X86_64 => PathBuf::from("/bin/busybox"),
            Arch::Arm64 => self.work.join("busybox-arm64/bin/busybox"),
        }
    }

    pub fn build_dir(&self, arch: Arch, mode: Mode) -> PathBuf {
        self.work.join("build").join(format!("{arch}-{mode}"))
    }

    pub fn kunit_dir(&self, arch: impl fmt::Display, mode: Mode) -> PathBuf {
        self.work.join("kunit").join(format!("{arch}-{mode}"))
    }

    /// The `make` variables that select LLVM and the patched toolchain.
    pub fn make_vars(&self, toolchain: &Path) -> Vec<String> {
        let mut vars = vec![
            format!("LLVM={LLVM_SUFFIX}"),
            format!("RUSTC={}", toolchain.join("bin/rustc").display()),
            format!("RUSTDOC={}", toolchain.join("bin/rustdoc").display()),
            format!(
                "RUST_LIB_SRC={}",
                toolchain.join("lib/rustlib/src/rust/library").display()
            ),
            format!("BINDGEN={}", self.bindgen().display()),
        ];
        // Built by `toolchain --tools` only; the kernel needs them for rustfmtcheck and CLIPPY=1.
        for (var, tool) in [("RUSTFMT", "rustfmt"), ("CLIPPY_DRIVER", "clippy-driver")] {
            let path = toolchain.join("bin").join(tool);
            if path.exists() {
                vars.push(format!("{var}={}", path.display()));
            }
        }
        vars
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Arch {
    #[default]
    #[value(name = "x86_64")]
    X86_64,
    Arm64,
}

impl Arch {
    pub fn kernel_arch(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Arm64 => "arm64",
        }
    }

    pub fn image(self) -> &'static str {
        match self {
            Arch::X86_64 => "arch/x86/boot/bzImage",
            Arch::Arm64 => "arch/arm64/boot/Image",
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kernel_arch())
    }
}

/// The rustc flags for `-Coverflow-checks=VALUE`: `report` is unstable and also needs
/// `-Zunstable-options`.
pub fn overflow_checks_flags(value: &str) -> Vec<String> {
    let mut flags = Vec::new();
    if value == "report" {
        flags.push("-Zunstable-options".to_string());
    }
    flags.push(format!("-Coverflow-checks={value}"));
    flags
}

/// What an overflowing Rust integer operation does in the kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// `CONFIG_RUST_OVERFLOW_REPORT=y`: WARN and continue with the wrapped value.
    #[default]
    Report,
    /// `CONFIG_RUST_OVERFLOW_CHECKS=y` (today's default): panic.
    Panic,
    /// No overflow checks: wrap silently.
    Off,
}

impl Mode {
    /// The Kconfig lines selecting this mode.
    pub fn kconfig(self) -> &'static str {
        match self {
            Mode::Report => "CONFIG_RUST_OVERFLOW_CHECKS=y\nCONFIG_RUST_OVERFLOW_REPORT=y\n",
            Mode::Panic => {
                "CONFIG_RUST_OVERFLOW_CHECKS=y\n# CONFIG_RUST_OVERFLOW_REPORT is not set\n"
            }
            Mode::Off => "# CONFIG_RUST_OVERFLOW_CHECKS is not set\n",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Report => "report",
            Mode::Panic => "panic",
            Mode::Off => "off",
        })
    }
}
