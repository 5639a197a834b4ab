//! `toolchain`: the patched rustc, built from Debian's rust-web-src with patches/rust applied.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use crate::ctx::{Ctx, LLVM_CONFIG, RUSTC_SRC, STAGE0};
use crate::patches;
use crate::run::{capture, libtest_counts, run_logged, spawn_logged, write_if_changed, Lock};
use crate::setup::hex;

/// Bump when the way the toolchain is built or installed changes.
const RECIPE: &str = "2";
const BUILD_TIMEOUT: Duration = Duration::from_secs(100 * 60);
const HOST: &str = "x86_64-unknown-linux-gnu";

#[derive(clap::Args, Default)]
pub struct Args {
    /// Also build rustfmt and clippy-driver (for `make rustfmtcheck` and `make CLIPPY=1`).
    #[arg(long)]
    pub tools: bool,
}

pub fn run(ctx: &Ctx, args: &Args) -> Result<PathBuf> {
    let source_version = source_version()?;
    let stack = patches::stack(&ctx.repo, patches::Which::Rust);
    let diffs = patches::stack_diffs(&stack)?;
    let config = bootstrap_toml(ctx)?;

    let dir_for = |tools: bool| {
        ctx.work
            .join("toolchains")
            .join(cache_key(&source_version, &config, &diffs, tools))
    };
    let dir = dir_for(args.tools);
    // A toolchain built with the tools also serves a request without them.
    for candidate in [dir.clone(), dir_for(true)] {
        if candidate.join(".complete").exists() {
            eprintln!("toolchain: cache hit {}", candidate.display());
            point_current(ctx, &candidate)?;
            return Ok(candidate);
        }
    }

    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    let tree = prepare_tree(ctx, &source_version)?;
    patches::sync(ctx, &tree, &stack)?;
    let config_path = ctx.rustc_dir().join("bootstrap.toml");
    write_if_changed(&config_path, config.as_bytes())?;

    let mut cmd = x_py(&tree);
    cmd.args(["build", "--config"]).arg(&config_path).args([
        "--stage",
        "1",
        "library",
        "src/tools/rustdoc",
    ]);
    if args.tools {
        cmd.args(["src/tools/rustfmt", "src/tools/clippy"]);
    }
    run_logged(cmd, "rustc build", &ctx.log("toolchain-build")?, BUILD_TIMEOUT)
        .context("building the patched rustc failed; fix the patch in the rustc tree, commit, `export`, and run `toolchain` again")?;

    install(ctx, &tree, &dir, args.tools)?;
    point_current(ctx, &dir)?;
    Ok(dir)
}

/// `python3 x.py` in the rustc tree, with the environment the same however the harness was
/// started. `cargo run` puts its own directories in `LD_LIBRARY_PATH`, and `rustc_llvm`'s build
/// script reruns when that changes: `compiletest` would rebuild the compiler from `rustc_llvm`
/// on whenever `toolchain` ran from another shell.
fn x_py(tree: &Path) -> Command {
    let mut cmd = Command::new("python3");
    cmd.current_dir(tree)
        .env_remove("LD_LIBRARY_PATH")
        .arg("x.py");
    cmd
}

/// Hashes every input of the build: the source, what the series change in it (not their
/// commit messages), the bootstrap configuration.
fn cache_key(source_version: &str, config: &str, diffs: &[u8], tools: bool) -> String {
    let mut hasher = Sha256::new();
    for part in [
        RECIPE.as_bytes(),
        source_version.as_bytes(),
        config.as_bytes(),
    ] {
        hasher.update(part);
        hasher.update([0]);
    }
    hasher.update(diffs);
    hasher.update([tools as u8]);
    hex(&hasher.finalize())[..16].to_string()
}

fn source_version() -> Result<String> {
    let mut cmd = Command::new("dpkg-query");
    cmd.args(["-W", "-f=${Version}", "rust-web-src"]);
    let version = capture(cmd, Duration::from_secs(60))
        .context("rust-web-src is not installed; run `setup`")?;
    if !version.starts_with("1.96.0") {
        bail!("rust-web-src is {version}, but the patches are for 1.96.0; install rust-web-src 1.96.0");
    }
    Ok(version)
}

fn stage0(tool: &str) -> Result<PathBuf> {
    let mut cmd = Command::new("rustup");
    cmd.args(["which", "--toolchain", STAGE0, tool]);
    let path = capture(cmd, Duration::from_secs(60)).with_context(|| {
        format!("the stage0 toolchain {STAGE0} is missing; install it with `rustup toolchain install {STAGE0}`")
    })?;
    Ok(PathBuf::from(path.trim()))
}

fn bootstrap_toml(ctx: &Ctx) -> Result<String> {
    let build_dir = ctx.rustc_dir().join("build");
    Ok(format!(
        r#"# Written by overflow-harness; see harness/src/toolchain.rs.
change-id = "ignore"

[build]
build-dir = "{build}"
cargo = "{cargo}"
rustc = "{rustc}"
rustfmt = "{rustfmt}"
submodules = false
docs = false
extended = false
optimized-compiler-builtins = false
locked-deps = true

[llvm]
download-ci-llvm = false
link-shared = true

[rust]
channel = "dev"
omit-git-hash = true
deny-warnings = false
codegen-backends = ["llvm"]
debuginfo-level = 0
incremental = false

[target.{HOST}]
llvm-config = "{LLVM_CONFIG}"
"#,
        build = build_dir.display(),
        cargo = stage0("cargo")?.display(),
        rustc = stage0("rustc")?.display(),
        rustfmt = stage0("rustfmt")?.display(),
    ))
}

/// The rustc work tree: a git copy of the Debian source with what Debian stripped restored.
fn prepare_tree(ctx: &Ctx, source_version: &str) -> Result<PathBuf> {
    let tree = ctx.rustc_dir().join("src");
    let message = format!("rustc 1.96.0 from rust-web-src {source_version}");
    if tree.join(".git").exists() {
        let base = patches::base_commit(&tree)?;
        let mut cmd = patches::git(&tree);
        cmd.args(["log", "-1", "--format=%s", &base]);
        let subject = capture(cmd, Duration::from_secs(60))?;
        if subject.trim() != message {
            bail!(
                "{} was made from another source ({}); move it away to rebuild it from {RUSTC_SRC}",
                tree.display(),
                subject.trim()
            );
        }
        return Ok(tree);
    }
    let tmp = ctx.rustc_dir().join("src.tmp");
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(ctx.rustc_dir())?;
    let mut cmd = Command::new("cp");
    cmd.args(["-a", RUSTC_SRC]).arg(&tmp);
    run_logged(
        cmd,
        "copy rustc source",
        &ctx.log("rustc-copy")?,
        Duration::from_secs(600),
    )?;
    // rustdoc embeds the license texts that Debian removed from the source package.
    let statics = tmp.join("src/librustdoc/html/static");
    fs::copy(
        "/usr/share/common-licenses/Apache-2.0",
        statics.join("LICENSE-APACHE.txt"),
    )
    .context("copying /usr/share/common-licenses/Apache-2.0 (package base-files)")?;
    fs::write(
        statics.join("LICENSE-MIT.txt"),
        include_str!("../assets/LICENSE-MIT.txt"),
    )?;
    // compiletest compiles this C file before any test; Debian ships no tests/.
    let aux = tmp.join("tests/auxiliary");
    fs::create_dir_all(&aux)?;
    fs::write(
        aux.join("rust_test_helpers.c"),
        "// Stub: the Debian source package has no tests/auxiliary; compiletest builds this file.\n",
    )?;
    let body = "With rustdoc's license files restored, and a stub\ntests/auxiliary/rust_test_helpers.c for compiletest.";
    patches::init_pristine(ctx, &tmp, &format!("{message}\n\n{body}"))?;
    // Cargo fills in the lock entries that Debian pruned; that is not a change to the source.
    let mut cmd = patches::git(&tmp);
    cmd.args([
        "update-index",
        "--skip-worktree",
        "Cargo.lock",
        "src/bootstrap/Cargo.lock",
    ]);
    capture(cmd, Duration::from_secs(60))?;
    fs::rename(&tmp, &tree)?;
    Ok(tree)
}

fn install(ctx: &Ctx, tree: &Path, dir: &Path, tools: bool) -> Result<()> {
    let build = ctx.rustc_dir().join("build").join(HOST);
    let tmp = dir.with_extension("tmp");
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(dir.parent().unwrap())?;
    let mut cmd = Command::new("cp");
    cmd.arg("-a").arg(build.join("stage1")).arg(&tmp);
    capture(cmd, Duration::from_secs(600))?;
    if tools {
        for tool in ["rustfmt", "cargo-fmt", "clippy-driver", "cargo-clippy"] {
            let from = build.join("stage1-tools-bin").join(tool);
            if from.exists() {
                fs::copy(&from, tmp.join("bin").join(tool))?;
            }
        }
    }
    // The kernel compiles `core` from RUST_LIB_SRC: give it the patched library, as a copy so
    // that later edits to the work tree do not change an installed toolchain.
    let lib_src = tmp.join("lib/rustlib/src/rust");
    let _ = fs::remove_file(&lib_src);
    let _ = fs::remove_dir_all(&lib_src);
    fs::create_dir_all(&lib_src)?;
    let mut cmd = Command::new("cp");
    cmd.arg("-a")
        .arg(tree.join("library"))
        .arg(lib_src.join("library"));
    capture(cmd, Duration::from_secs(600))?;

    let mut cmd = Command::new(tmp.join("bin/rustc"));
    cmd.arg("-vV");
    let version =
        capture(cmd, Duration::from_secs(60)).context("the installed rustc does not run")?;
    fs::write(tmp.join(".complete"), version)?;
    let _ = fs::remove_dir_all(dir);
    fs::rename(&tmp, dir)?;
    eprintln!("toolchain: installed {}", dir.display());
    Ok(())
}

fn point_current(ctx: &Ctx, dir: &Path) -> Result<()> {
    let link = ctx.toolchain_current();
    let tmp = link.with_extension("new");
    let _ = fs::remove_file(&tmp);
    std::os::unix::fs::symlink(dir, &tmp)?;
    fs::rename(&tmp, &link)?;
    Ok(())
}

/// Whether the toolchain accepts `-Coverflow-checks=report` (false before the rustc series).
pub fn supports_report(toolchain: &Path) -> bool {
    let mut cmd = Command::new(toolchain.join("bin/rustc"));
    cmd.args(crate::ctx::overflow_checks_flags("report"))
        .args(["--print", "cfg"])
        .env("RUSTC_BOOTSTRAP", "1");
    capture(cmd, Duration::from_secs(60)).is_ok()
}

/// The compiletest tests that the series adds or changes: the files (`tests/<suite>/...rs`)
/// without the auxiliary crates (`auxiliary/` directories), which compiletest builds for the
/// tests that use them, and the directory of each `run-make` test (`tests/run-make/<name>`),
/// whose files are one test.
pub fn series_tests(series: &[(String, Vec<u8>)]) -> Vec<String> {
    let mut tests: Vec<String> = series
        .iter()
        .flat_map(|(_, bytes)| {
            String::from_utf8_lossy(bytes)
                .into_owned()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter_map(|l| l.strip_prefix("+++ b/").map(str::to_string))
        .filter(|p| {
            p.starts_with("tests/")
                && p.ends_with(".rs")
                && !p.split('/').any(|component| component == "auxiliary")
        })
        .map(|p| match p.strip_prefix("tests/run-make/") {
            Some(rest) => format!("tests/run-make/{}", rest.split('/').next().unwrap_or(rest)),
            None => p,
        })
        .collect();
    tests.sort();
    tests.dedup();
    tests
}

/// Runs the series' compiletest tests with the stage1 compiler; returns (passed, failed).
pub fn compiletest(ctx: &Ctx) -> Result<(usize, usize)> {
    let stack = patches::stack(&ctx.repo, patches::Which::Rust);
    let series: Vec<_> = patches::stack_contents(&stack)?
        .into_iter()
        .flatten()
        .collect();
    let tests = series_tests(&series);
    if tests.is_empty() {
        return Ok((0, 0));
    }
    let tree = ctx.rustc_dir().join("src");
    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    patches::sync(ctx, &tree, &stack)?;
    let mut cmd = x_py(&tree);
    cmd.args(["test", "--config"])
        .arg(ctx.rustc_dir().join("bootstrap.toml"))
        .args(["--stage", "1"])
        .args(&tests)
        .args(["--force-rerun", "--no-fail-fast"]);
    let log = ctx.log("compiletest")?;
    let status = spawn_logged(&mut cmd, "compiletest", &log, BUILD_TIMEOUT)?;
    let (passed, failed) = libtest_counts(&fs::read_to_string(&log)?);
    if !status.success() && failed == 0 {
        bail!(
            "compiletest failed before running tests ({status}); see {}",
            log.display()
        );
    }
    Ok((passed, failed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_tests_leave_out_auxiliary_crates_and_name_run_make_directories() {
        let patch = b"+++ b/tests/codegen-llvm/report.rs\n\
                      +++ b/tests/codegen-llvm/auxiliary/upstream.rs\n\
                      +++ b/tests/auxiliary/rust_test_helpers.rs\n\
                      +++ b/library/core/src/lib.rs\n\
                      +++ b/tests/codegen-llvm/report.rs\n\
                      +++ b/tests/run-make/cgus/rmake.rs\n\
                      +++ b/tests/run-make/cgus/lib.rs\n"
            .to_vec();
        assert_eq!(
            series_tests(&[("0001-x.patch".to_string(), patch)]),
            ["tests/codegen-llvm/report.rs", "tests/run-make/cgus"]
        );
    }
}
