//! overflow-harness: from a fresh Debian 12 machine to a rustc with `-Coverflow-checks=report`,
//! a Linux 7.2 tree with the overflow-report series, QEMU boots and KUnit results.

mod bench;
mod boot;
mod boot_checks;
mod check;
mod conformance;
mod crates;
mod ctx;
mod drivers;
mod kernel;
mod kunit;
mod measure;
mod patches;
mod plugin;
mod run;
mod runtime;
mod setup;
mod test;
mod toolchain;
mod warn;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::ctx::Ctx;

#[derive(Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    /// Where sources, builds, toolchains and logs live (kept between runs).
    #[arg(
        long,
        env = "OVERFLOW_HARNESS_DIR",
        default_value = "/var/tmp/overflow-harness",
        global = true
    )]
    work_dir: PathBuf,

    /// The linux-source-7.2 package to use instead of downloading it from Debian sid.
    #[arg(long, env = "OVERFLOW_HARNESS_LINUX_DEB", global = true)]
    linux_deb: Option<PathBuf>,

    /// SHA256SUMS file that `--linux-deb` must match (default: SHA256SUMS next to the .deb).
    #[arg(long, env = "OVERFLOW_HARNESS_LINUX_SHA256SUMS", global = true)]
    linux_sha256sums: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Install the Debian packages, linux-source-7.2, arm64 busybox and bindgen (idempotent).
    Setup,
    /// Build the patched rustc (stage1 rustc, std, rustdoc) and print its directory.
    Toolchain(toolchain::Args),
    /// Unpack Linux 7.2 as a git repository and apply patches/linux/series.
    Tree(kernel::TreeArgs),
    /// Write the work trees' commits back to patches/linux and patches/rust.
    Export {
        /// Only this tree (default: both that exist).
        #[arg(value_enum)]
        only: Option<patches::Which>,
    },
    /// Configure and build the kernel for one architecture and overflow-checks mode.
    Build(kernel::BuildArgs),
    /// Boot the built kernel in QEMU, load its modules, and extract WARN reports.
    Boot(boot::Args),
    /// Run the tree's kunit.py with the patched toolchain and summarise the results.
    Kunit(kunit::Args),
    /// Run the compiler conformance programs with the patched toolchain.
    Conformance,
    /// The test command: cargo test, conformance, KUnit on x86_64 and arm64, the demo boot.
    Test(test::Args),
    /// Setup, toolchain, tree, build x86_64 in report mode, boot, show the WARN reports.
    Demo,
    /// Before sending the kernel series: checkpatch, rustfmtcheck, CLIPPY=1, rustdoc, the
    /// panic_on_warn boot, a build with a rustc without report mode, and every patch alone.
    Check(check::Args),
    /// Measure report mode against panic and off: kernel .text, userspace instructions, bytes
    /// per check site, storms. Writes BENCHMARKS.md and BENCHMARKS.json.
    Bench(bench::Args),
    /// Every Rust driver and sample of 7.2 for one architecture, built with CLIPPY=1 in off,
    /// panic and report mode: new warnings, `.text` per driver, and a boot that exercises them.
    Drivers(drivers::Args),
    /// Kernel run time in instructions (QEMU -icount) in off, panic and report mode: 4 KiB
    /// O_DIRECT I/O through null_blk and rnull, and repeated overflows at a reported site.
    Runtime(runtime::Args),
    /// Build the LLVM pass plugin of plugin/ (the overflow check passes, loaded with
    /// `rustc -Zllvm-plugins=`) and print its path as the last line.
    Plugin,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(cli: Cli) -> Result<()> {
    let ctx = Ctx::new(cli.work_dir, cli.linux_deb, cli.linux_sha256sums)?;
    match cli.command {
        Command::Setup => setup::run(&ctx),
        Command::Toolchain(args) => {
            let dir = toolchain::run(&ctx, &args)?;
            println!("{}", dir.display());
            Ok(())
        }
        Command::Tree(args) => kernel::tree(&ctx, &args).map(|_| ()),
        Command::Export { only } => patches::export_all(&ctx, only),
        Command::Build(args) => kernel::build(&ctx, &args).map(|_| ()),
        Command::Boot(args) => boot::run(&ctx, &args).map(|_| ()),
        Command::Kunit(args) => kunit::run(&ctx, &args).map(|_| ()),
        Command::Conformance => {
            let summary = conformance::run(&ctx)?;
            if summary.failed > 0 {
                anyhow::bail!("{} conformance check(s) failed", summary.failed);
            }
            Ok(())
        }
        Command::Test(args) => test::run(&ctx, &args),
        Command::Demo => demo(&ctx),
        Command::Check(args) => check::run(&ctx, &args),
        Command::Bench(args) => bench::run(&ctx, &args),
        Command::Plugin => {
            println!("{}", plugin::build(&ctx)?.display());
            Ok(())
        }
        Command::Drivers(args) => drivers::run(&ctx, &args),
        Command::Runtime(args) => runtime::run(&ctx, &args),
    }
}

fn demo(ctx: &Ctx) -> Result<()> {
    setup::run(ctx)?;
    toolchain::run(ctx, &toolchain::Args::default())?;
    kernel::tree(ctx, &kernel::TreeArgs::default())?;
    let boot = test::demo_kernel(ctx)?;
    for warn in &boot.console.warns {
        println!("{}\n", warn.text.join("\n"));
    }
    Ok(())
}
