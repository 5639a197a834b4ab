//! Patch series kept in the repository and applied to git work trees with `git am`.
//!
//! A work tree's first commit is its pristine source. The harness applies `series` on top of it
//! and records the resulting HEAD; `export` writes the commits back with `git format-patch`. A
//! tree whose HEAD moved since the harness applied the series holds work that only `export`
//! may take (the harness never resets it).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::ctx::Ctx;
use crate::run::{capture, run_logged};

const GIT_TIMEOUT: Duration = Duration::from_secs(1800);
const COVER_LETTER: &str = "0000-cover-letter.patch";
const APPLIED_MARKER: &str = "overflow-harness-applied";

/// `git` with a fixed identity for the commits the harness makes.
pub fn git(tree: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(tree).args([
        "-c",
        "user.name=overflow-harness",
        "-c",
        "user.email=overflow-harness@localhost",
    ]);
    cmd
}

fn git_out(tree: &Path, args: &[&str]) -> Result<String> {
    let mut cmd = git(tree);
    cmd.args(args);
    Ok(capture(cmd, GIT_TIMEOUT)?.trim().to_string())
}

/// Makes `dir` a git repository whose only commit is its current content.
pub fn init_pristine(ctx: &Ctx, dir: &Path, message: &str) -> Result<()> {
    let log = ctx.log("git-init")?;
    let mut cmd = git(dir);
    cmd.args(["init", "-q", "-b", "main"]);
    run_logged(cmd, "git init", &log, GIT_TIMEOUT)?;
    let mut cmd = git(dir);
    cmd.args(["add", "-A", "-f"]);
    run_logged(cmd, "git add (pristine tree)", &log, GIT_TIMEOUT)?;
    let mut cmd = git(dir);
    cmd.args(["commit", "-q", "--no-verify", "-m", message]);
    run_logged(cmd, "git commit (pristine tree)", &log, GIT_TIMEOUT)
}

/// The patch files named in `dir/series`, in order.
pub fn read_series(dir: &Path) -> Result<Vec<PathBuf>> {
    let series = dir.join("series");
    let text =
        fs::read_to_string(&series).with_context(|| format!("reading {}", series.display()))?;
    let mut out = Vec::new();
    for line in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let path = dir.join(line);
        if !path.is_file() {
            bail!("{} names {line}, which does not exist", series.display());
        }
        out.push(path);
    }
    Ok(out)
}

/// The content of the series files, to compare against a tree and to key caches.
pub fn series_contents(dir: &Path) -> Result<Vec<(String, Vec<u8>)>> {
    read_series(dir)?
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            Ok((
                name,
                fs::read(&p).with_context(|| format!("reading {}", p.display()))?,
            ))
        })
        .collect()
}

/// The `format-patch` option that gives the patches the subject prefix of the cover letter in
/// `patches_dir`, if it has one: `[RFC PATCH v2 0/9]` gives `--subject-prefix=RFC PATCH v2`, so
/// that every patch carries the cover letter's `RFC` and version.
fn subject_prefix_args(patches_dir: &Path) -> Result<Vec<String>> {
    let cover = patches_dir.join(COVER_LETTER);
    if !cover.is_file() {
        return Ok(Vec::new());
    }
    let text = fs::read_to_string(&cover)?;
    let prefix = text
        .lines()
        .find_map(|l| l.strip_prefix("Subject: ["))
        .and_then(|l| l.split_once(']'))
        .and_then(|(p, _)| p.rsplit_once(' '))
        .filter(|(_, number)| {
            number
                .split_once('/')
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b == b'0'))
        })
        .map(|(p, _)| p)
        .with_context(|| {
            format!(
                "{}: no `Subject: [PREFIX 0/N] ...` line; write one, e.g. \
                 `Subject: [RFC PATCH v2 0/9] ...`",
                cover.display()
            )
        })?;
    Ok(vec![format!("--subject-prefix={prefix}")])
}

/// The tree's commits as `git format-patch` writes them, in a stable form: a zero commit id in
/// the `From` line and no signature with the git version, so re-exporting is byte-identical. The
/// subject prefix is the cover letter's in `patches_dir`.
pub fn format_patches(tree: &Path, patches_dir: &Path) -> Result<Vec<(String, Vec<u8>)>> {
    let prefix = subject_prefix_args(patches_dir)?;
    let base = base_commit(tree)?;
    let out = tree.join(".git/overflow-harness-export");
    let _ = fs::remove_dir_all(&out);
    let mut cmd = git(tree);
    cmd.args([
        "-c",
        "core.abbrev=12",
        "format-patch",
        "--zero-commit",
        "--no-signature",
        "-n",
    ])
    .args(&prefix)
    .arg("-o")
    .arg(&out)
    .arg(format!("{base}..HEAD"));
    capture(cmd, GIT_TIMEOUT)?;
    let mut patches: Vec<(String, Vec<u8>)> = fs::read_dir(&out)
        .map(|d| d.flatten().collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|e| {
            Ok((
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path())?,
            ))
        })
        .collect::<Result<_>>()?;
    patches.sort();
    let _ = fs::remove_dir_all(&out);
    Ok(patches)
}

pub fn base_commit(tree: &Path) -> Result<String> {
    let roots = git_out(tree, &["rev-list", "--max-parents=0", "HEAD"])?;
    roots
        .lines()
        .last()
        .map(str::to_string)
        .context("the tree has no commits")
}

fn is_clean(tree: &Path) -> Result<bool> {
    Ok(git_out(tree, &["status", "--porcelain", "--untracked-files=normal"])?.is_empty())
}

/// Brings `tree` to its pristine commit plus `patches_dir/series`, refusing to lose work.
pub fn sync(ctx: &Ctx, tree: &Path, patches_dir: &Path) -> Result<()> {
    let name = tree.display();
    if !is_clean(tree)? {
        bail!(
            "{name} has uncommitted changes. Commit them and run `export`, or discard them \
             with `git -C {name} reset --hard && git -C {name} clean -fd`."
        );
    }
    let wanted = series_contents(patches_dir)?;
    if format_patches(tree, patches_dir)? == wanted {
        eprintln!(
            "{name}: in sync with {} ({} patches)",
            patches_dir.display(),
            wanted.len()
        );
        return Ok(());
    }
    let head = git_out(tree, &["rev-parse", "HEAD"])?;
    let base = base_commit(tree)?;
    let marker = tree.join(".git").join(APPLIED_MARKER);
    let applied = fs::read_to_string(&marker).unwrap_or_default();
    if head != base && head != applied.trim() {
        bail!(
            "{name} has commits that are not in {}. Run `export` to keep them, or drop them \
             with `git -C {name} reset --hard {base}`.",
            patches_dir.display()
        );
    }
    let mut cmd = git(tree);
    cmd.args(["reset", "-q", "--hard", &base]);
    capture(cmd, GIT_TIMEOUT)?;
    let log = ctx.log("git-am")?;
    for patch in read_series(patches_dir)? {
        let mut cmd = git(tree);
        cmd.args(["am", "-q", "--no-3way"]).arg(&patch);
        if let Err(err) = run_logged(cmd, "git am", &log, GIT_TIMEOUT) {
            let mut abort = git(tree);
            abort.args(["am", "--abort"]);
            let _ = capture(abort, GIT_TIMEOUT);
            let mut reset = git(tree);
            reset.args(["reset", "-q", "--hard", &base]);
            let _ = capture(reset, GIT_TIMEOUT);
            return Err(err.context(format!(
                "{} no longer applies to {name}; the tree was reset to its pristine commit. \
                 Rebase the series on the new source and export it again.",
                patch.display()
            )));
        }
    }
    let head = git_out(tree, &["rev-parse", "HEAD"])?;
    fs::write(&marker, format!("{head}\n"))?;
    eprintln!("{name}: applied {} patches", wanted.len());
    Ok(())
}

/// Writes the tree's commits to `patches_dir`, keeping a hand-written cover letter.
pub fn export(tree: &Path, patches_dir: &Path) -> Result<()> {
    let patches = format_patches(tree, patches_dir)?;
    fs::create_dir_all(patches_dir)?;
    for entry in fs::read_dir(patches_dir)?.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let numbered = file.len() > 5 && file[..4].bytes().all(|b| b.is_ascii_digit());
        if numbered && file.ends_with(".patch") && file != COVER_LETTER {
            fs::remove_file(entry.path())?;
        }
    }
    let mut series = String::new();
    for (name, bytes) in &patches {
        fs::write(patches_dir.join(name), bytes)?;
        series.push_str(name);
        series.push('\n');
    }
    fs::write(patches_dir.join("series"), series)?;
    let head = git_out(tree, &["rev-parse", "HEAD"])?;
    fs::write(tree.join(".git").join(APPLIED_MARKER), format!("{head}\n"))?;
    eprintln!(
        "exported {} patches from {} to {}",
        patches.len(),
        tree.display(),
        patches_dir.display()
    );
    Ok(())
}

/// The two work trees.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    Linux,
    Rust,
}

pub fn export_all(ctx: &Ctx, only: Option<Which>) -> Result<()> {
    let trees = [
        (
            Which::Linux,
            ctx.linux_src(),
            ctx.repo.join("patches/linux"),
        ),
        (
            Which::Rust,
            ctx.rustc_dir().join("src"),
            ctx.repo.join("patches/rust"),
        ),
    ];
    let mut any = false;
    for (which, tree, dir) in trees {
        if only.is_none_or(|o| o == which) && tree.join(".git").exists() {
            if !is_clean(&tree)? {
                bail!(
                    "{} has uncommitted changes; commit them first",
                    tree.display()
                );
            }
            export(&tree, &dir)?;
            any = true;
        }
    }
    if !any {
        bail!("no work tree to export; run `tree` or `toolchain` first");
    }
    Ok(())
}
