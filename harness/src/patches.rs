//! Patch series kept in the repository and applied to git work trees with `git am`.
//!
//! A work tree's first commit is its pristine source. A tree takes a stack of series: the core
//! (`patches/linux`, `patches/rust`), then the follow-up applied on top of it
//! (`patches/linux-trap`, `patches/rust-trap`), when that directory exists. In the tree, an empty
//! commit whose subject is `overflow-harness: start of patches/<dir>` starts each series after
//! the first, so that `git rebase -i` keeps the boundary and `export` knows which commits go
//! where. The harness applies the stack and records the resulting HEAD; `export` writes the
//! commits back with `git format-patch`. A tree whose HEAD moved since the harness applied the
//! stack holds work that only `export` may take (the harness never resets it).

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
/// The subject of the empty commit that starts a series after the first, followed by the
/// directory's name relative to the repository.
const STACK_SUBJECT: &str = "overflow-harness: start of ";
/// Where a stack is applied before the tree moves to it (under the tree's `.git`).
const SCRATCH: &str = "overflow-harness-apply";

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
fn format_patches(tree: &Path, patches_dir: &Path, range: &str) -> Result<Vec<(String, Vec<u8>)>> {
    let prefix = subject_prefix_args(patches_dir)?;
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
    .arg(range);
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

/// The series applied to a tree, in order: the core, then the follow-up if its directory exists.
pub fn stack(repo: &Path, which: Which) -> Vec<PathBuf> {
    let names: &[&str] = match which {
        Which::Linux => &["linux", "linux-trap"],
        Which::Rust => &["rust", "rust-trap"],
    };
    let dirs = names.iter().map(|name| repo.join("patches").join(name));
    dirs.enumerate()
        .filter(|(i, dir)| *i == 0 || dir.join("series").is_file())
        .map(|(_, dir)| dir)
        .collect()
}

/// The name a stack's separator commit gives a directory: `patches/linux-trap`.
fn stack_name(dir: &Path) -> String {
    format!(
        "patches/{}",
        dir.file_name().unwrap_or_default().to_string_lossy()
    )
}

/// The patches of every series of `dirs`, in order, as `series_contents` reads them.
pub fn stack_contents(dirs: &[PathBuf]) -> Result<Vec<Vec<(String, Vec<u8>)>>> {
    dirs.iter().map(|d| series_contents(d)).collect()
}

/// What a stack changes in the tree, without the mail headers and commit messages: the diffs of
/// its patches, in order. Moving a patch between the series of a stack, or rewording it, leaves
/// this unchanged.
pub fn stack_diffs(dirs: &[PathBuf]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for (_, bytes) in stack_contents(dirs)?.into_iter().flatten() {
        let text = String::from_utf8_lossy(&bytes);
        let diff = text
            .find("\ndiff --git ")
            .map_or("", |start| &text[start + 1..]);
        out.extend_from_slice(diff.as_bytes());
        out.push(0);
    }
    Ok(out)
}

/// The tree's commits after its pristine one, oldest first, with their subjects.
fn commits_since_base(tree: &Path) -> Result<Vec<(String, String)>> {
    let base = base_commit(tree)?;
    let log = git_out(
        tree,
        &[
            "log",
            "--reverse",
            "--format=%H %s",
            &format!("{base}..HEAD"),
        ],
    )?;
    Ok(log
        .lines()
        .map(|line| {
            let (hash, subject) = line.split_once(' ').unwrap_or((line, ""));
            (hash.to_string(), subject.to_string())
        })
        .collect())
}

/// The tree's patches after its pristine commit, oldest first, with their subjects: every
/// commit but the separators between the series of a stack, which change nothing.
pub fn patch_commits(tree: &Path) -> Result<Vec<(String, String)>> {
    let mut commits = commits_since_base(tree)?;
    commits.retain(|(_, subject)| !subject.starts_with(STACK_SUBJECT));
    Ok(commits)
}

/// `patches/linux + patches/linux-trap`: the series of `dirs`, joined with `separator`.
fn stack_names(dirs: &[PathBuf], separator: &str) -> String {
    dirs.iter()
        .map(|d| stack_name(d))
        .collect::<Vec<_>>()
        .join(separator)
}

/// The commits of each series of `dirs` in the tree, split at the separator commits: the commit
/// the series starts after, and its last commit, if it has one.
fn stack_ranges(tree: &Path, dirs: &[PathBuf]) -> Result<Vec<(String, Option<String>)>> {
    let mut ranges: Vec<(String, Option<String>)> = vec![(base_commit(tree)?, None)];
    for (hash, subject) in commits_since_base(tree)? {
        if let Some(name) = subject.strip_prefix(STACK_SUBJECT) {
            let expected = dirs.get(ranges.len()).map(|d| stack_name(d));
            if expected.as_deref() != Some(name) {
                bail!(
                    "{}: commit {hash} starts {name}, but the next series of the stack is {}. \
                     Reorder the commits with `git rebase -i` so that the series follow each \
                     other as in {}.",
                    tree.display(),
                    expected.as_deref().unwrap_or("none"),
                    stack_names(dirs, ", ")
                );
            }
            ranges.push((hash, None));
        } else {
            ranges.last_mut().unwrap().1 = Some(hash);
        }
    }
    ranges.resize(dirs.len(), (String::new(), None));
    Ok(ranges)
}

/// The commits of `ranges` (as `stack_ranges` gives them) as `git format-patch` writes them, one
/// list per series of `dirs`.
fn format_ranges(
    tree: &Path,
    dirs: &[PathBuf],
    ranges: &[(String, Option<String>)],
) -> Result<Vec<Vec<(String, Vec<u8>)>>> {
    let mut out = Vec::new();
    for (dir, (from, to)) in dirs.iter().zip(ranges) {
        out.push(match to {
            Some(to) => format_patches(tree, dir, &format!("{from}..{to}"))?,
            None => Vec::new(),
        });
    }
    Ok(out)
}

/// The tree's commits after its pristine one as `git format-patch` writes them, one list per
/// series of `dirs`, split at the separator commits.
pub fn format_stack(tree: &Path, dirs: &[PathBuf]) -> Result<Vec<Vec<(String, Vec<u8>)>>> {
    format_ranges(tree, dirs, &stack_ranges(tree, dirs)?)
}

/// A cover letter with its patch count, shortlog and diffstat brought up to date with the
/// commits `from..to`: the count in `Subject: [... 0/N]`, and everything from the shortlog's
/// `Author (N):` line to the signature's `-- ` line. The rest is hand-written and kept.
fn refresh_cover_letter(tree: &Path, text: &str, from: &str, to: &str) -> Result<String> {
    let range = format!("{from}..{to}");
    let log = git_out(tree, &["log", "--reverse", "--format=%an%x00%s", &range])?;
    let commits: Vec<(&str, &str)> = log.lines().filter_map(|l| l.split_once('\0')).collect();
    let mut stat = git(tree);
    stat.args(["diff", "--stat=72", from, to]);
    // Not `git_out()`, which would trim the indentation of the first line.
    let stat = capture(stat, GIT_TIMEOUT)?.trim_end().to_string();
    let mut out = String::new();
    let mut lines = text.lines();
    let mut replaced = false;
    while let Some(line) = lines.next() {
        let is_shortlog = line.ends_with("):")
            && line
                .rsplit_once(" (")
                .is_some_and(|(_, n)| n.trim_end_matches("):").bytes().all(|b| b.is_ascii_digit()));
        if !replaced && is_shortlog {
            let author = commits.first().map_or("", |c| c.0);
            out += &format!("{author} ({}):\n", commits.len());
            for (_, subject) in &commits {
                out += &format!("  {subject}\n");
            }
            out += &format!("\n{stat}\n\n");
            for rest in lines.by_ref() {
                if rest == "-- " {
                    out += "-- \n";
                    break;
                }
            }
            replaced = true;
            continue;
        }
        match line
            .strip_prefix("Subject: [")
            .and_then(|l| l.split_once(" 0/"))
        {
            Some((prefix, rest)) if rest.contains(']') => {
                let (_, after) = rest.split_once(']').unwrap();
                out += &format!("Subject: [{prefix} 0/{}]{after}\n", commits.len());
            }
            _ => {
                out += line;
                out += "\n";
            }
        }
    }
    Ok(out)
}

/// Brings `tree` to its pristine commit plus the series of `dirs`, refusing to lose work. The
/// stack is applied in a scratch worktree first, and the tree then reset to the result, so
/// that a file keeps its modification time, and the builds that depend on it stay valid, when
/// its content does not change: rewording a patch or moving it to the next series rebuilds
/// nothing.
pub fn sync(ctx: &Ctx, tree: &Path, dirs: &[PathBuf]) -> Result<()> {
    let name = tree.display();
    if !is_clean(tree)? {
        bail!(
            "{name} has uncommitted changes. Commit them and run `export`, or discard them \
             with `git -C {name} reset --hard && git -C {name} clean -fd`."
        );
    }
    let wanted = stack_contents(dirs)?;
    let count: usize = wanted.iter().map(Vec::len).sum();
    let names = stack_names(dirs, " + ");
    if format_stack(tree, dirs).ok().as_ref() == Some(&wanted) {
        eprintln!("{name}: in sync with {names} ({count} patches)");
        return Ok(());
    }
    let head = git_out(tree, &["rev-parse", "HEAD"])?;
    let base = base_commit(tree)?;
    let marker = tree.join(".git").join(APPLIED_MARKER);
    let applied = fs::read_to_string(&marker).unwrap_or_default();
    if head != base && head != applied.trim() {
        bail!(
            "{name} has commits that are not in {names}. Run `export` to keep them, or drop \
             them with `git -C {name} reset --hard {base}`."
        );
    }
    let scratch = tree.join(".git").join(SCRATCH);
    let remove_scratch = || {
        let mut cmd = git(tree);
        cmd.args(["worktree", "remove", "--force"]).arg(&scratch);
        let _ = capture(cmd, GIT_TIMEOUT);
        let _ = fs::remove_dir_all(&scratch);
        let mut cmd = git(tree);
        cmd.args(["worktree", "prune"]);
        let _ = capture(cmd, GIT_TIMEOUT);
    };
    remove_scratch();
    let mut cmd = git(tree);
    cmd.args(["worktree", "add", "-q", "--detach"])
        .arg(&scratch)
        .arg(&base);
    capture(cmd, GIT_TIMEOUT)?;
    let log = ctx.log("git-am")?;
    for (i, dir) in dirs.iter().enumerate() {
        if i > 0 {
            let mut cmd = git(&scratch);
            let subject = format!("{STACK_SUBJECT}{}", stack_name(dir));
            cmd.args(["commit", "-q", "--allow-empty", "-m", &subject]);
            run_logged(cmd, "git commit (stack separator)", &log, GIT_TIMEOUT)?;
        }
        for patch in read_series(dir)? {
            let mut cmd = git(&scratch);
            cmd.args(["am", "-q", "--no-3way"]).arg(&patch);
            if let Err(err) = run_logged(cmd, "git am", &log, GIT_TIMEOUT) {
                remove_scratch();
                return Err(err.context(format!(
                    "{} no longer applies to {name}, which was left as it was. Rebase the \
                     series on the new source and export it again.",
                    patch.display()
                )));
            }
        }
    }
    let applied = git_out(&scratch, &["rev-parse", "HEAD"])?;
    remove_scratch();
    let mut cmd = git(tree);
    cmd.args(["reset", "-q", "--hard", &applied]);
    capture(cmd, GIT_TIMEOUT)?;
    fs::write(&marker, format!("{applied}\n"))?;
    eprintln!("{name}: applied {names} ({count} patches)");
    Ok(())
}

/// Writes the tree's commits to the series of `dirs`. A cover letter is kept, with its patch
/// count, shortlog and diffstat brought up to date.
pub fn export(tree: &Path, dirs: &[PathBuf]) -> Result<()> {
    let ranges = stack_ranges(tree, dirs)?;
    let stack = format_ranges(tree, dirs, &ranges)?;
    for ((dir, patches), (from, to)) in dirs.iter().zip(&stack).zip(&ranges) {
        fs::create_dir_all(dir)?;
        for entry in fs::read_dir(dir)?.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let numbered = file.len() > 5 && file[..4].bytes().all(|b| b.is_ascii_digit());
            if numbered && file.ends_with(".patch") && file != COVER_LETTER {
                fs::remove_file(entry.path())?;
            }
        }
        let mut series = String::new();
        for (name, bytes) in patches {
            fs::write(dir.join(name), bytes)?;
            series.push_str(name);
            series.push('\n');
        }
        fs::write(dir.join("series"), series)?;
        let cover = dir.join(COVER_LETTER);
        if let (Some(to), true) = (to, cover.is_file()) {
            let text = fs::read_to_string(&cover)?;
            fs::write(&cover, refresh_cover_letter(tree, &text, from, to)?)?;
        }
        eprintln!(
            "exported {} patches from {} to {}",
            patches.len(),
            tree.display(),
            dir.display()
        );
    }
    let head = git_out(tree, &["rev-parse", "HEAD"])?;
    fs::write(tree.join(".git").join(APPLIED_MARKER), format!("{head}\n"))?;
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
            stack(&ctx.repo, Which::Linux),
        ),
        (
            Which::Rust,
            ctx.rustc_dir().join("src"),
            stack(&ctx.repo, Which::Rust),
        ),
    ];
    let mut any = false;
    for (which, tree, dirs) in trees {
        if only.is_none_or(|o| o == which) && tree.join(".git").exists() {
            if !is_clean(&tree)? {
                bail!(
                    "{} has uncommitted changes; commit them first",
                    tree.display()
                );
            }
            export(&tree, &dirs)?;
            any = true;
        }
    }
    if !any {
        bail!("no work tree to export; run `tree` or `toolchain` first");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory under the system's temporary directory, removed when dropped.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn scratch(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("overflow-harness-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn git_ok(tree: &Path, args: &[&str]) {
        let status = git(tree).args(args).status().unwrap();
        assert!(status.success(), "git {args:?}");
    }

    fn commit_file(tree: &Path, file: &str, text: &str, subject: &str) {
        fs::write(tree.join(file), text).unwrap();
        git_ok(tree, &["add", file]);
        git_ok(tree, &["commit", "-q", "-m", subject]);
    }

    #[test]
    fn format_stack_splits_the_commits_at_the_separators() {
        let tmp = scratch("stack");
        let tree = tmp.0.join("tree");
        fs::create_dir_all(&tree).unwrap();
        git_ok(&tree, &["init", "-q", "-b", "main"]);
        commit_file(&tree, "a", "0\n", "pristine");
        commit_file(&tree, "a", "1\n", "core one");
        commit_file(&tree, "b", "1\n", "core two");
        git_ok(
            &tree,
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "overflow-harness: start of patches/linux-trap",
            ],
        );
        commit_file(&tree, "a", "2\n", "trap one");
        let dirs = [
            tmp.0.join("patches/linux"),
            tmp.0.join("patches/linux-trap"),
        ];

        let stack = format_stack(&tree, &dirs).unwrap();
        let names = |i: usize| stack[i].iter().map(|p| p.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(0), ["0001-core-one.patch", "0002-core-two.patch"]);
        assert_eq!(names(1), ["0001-trap-one.patch"]);
        let subjects: Vec<String> = patch_commits(&tree)
            .unwrap()
            .into_iter()
            .map(|c| c.1)
            .collect();
        assert_eq!(subjects, ["core one", "core two", "trap one"]);

        // Exported and read back, the stack is in sync; the diffs do not depend on the split.
        // The cover letter keeps its text, with the count, shortlog and diffstat of today.
        fs::create_dir_all(&dirs[0]).unwrap();
        let cover = dirs[0].join(COVER_LETTER);
        fs::write(
            &cover,
            "Subject: [RFC PATCH v9 0/7] why\n\nHand-written.\n\nA (7):\n  old\n\n old | 1 +\n\n-- \n2.47.3\n",
        )
        .unwrap();
        let stack = format_stack(&tree, &dirs).unwrap();
        assert!(String::from_utf8_lossy(&stack[0][0].1).contains("[RFC PATCH v9 1/2]"));
        export(&tree, &dirs).unwrap();
        let text = fs::read_to_string(&cover).unwrap();
        assert!(
            text.starts_with("Subject: [RFC PATCH v9 0/2] why\n\nHand-written.\n\n"),
            "{text}"
        );
        assert!(
            text.contains("(2):\n  core one\n  core two\n\n a | 2 +-\n b | 1 +\n"),
            "{text}"
        );
        assert!(
            !text.contains("old") && text.ends_with("-- \n2.47.3\n"),
            "{text}"
        );
        assert_eq!(stack_contents(&dirs).unwrap(), stack);
        let single = [tmp.0.join("patches/linux")];
        let before = stack_diffs(&dirs).unwrap();
        // A rebase that rewrites every commit keeps the separator.
        let status = git(&tree)
            .env("GIT_SEQUENCE_EDITOR", "true")
            .args(["rebase", "-q", "-i", "--force-rebase", "HEAD~4"])
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(format_stack(&tree, &dirs).unwrap(), stack);
        assert!(!before.is_empty());

        // Only the core: the separator names a series that is not in the stack.
        let err = format_stack(&tree, &single).unwrap_err().to_string();
        assert!(err.contains("starts patches/linux-trap"), "{err}");
    }

    #[test]
    fn stack_diffs_ignore_subjects_and_numbering() {
        let tmp = scratch("diffs");
        let patch = |subject: &str| {
            format!(
                "From 0000 Mon Sep 17 00:00:00 2001\nSubject: {subject}\n\nWhy.\n---\n \
                 a | 2 +-\n\ndiff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-0\n+1\n"
            )
        };
        let write = |dir: &str, files: &[(&str, String)]| {
            let dir = tmp.0.join(dir);
            fs::create_dir_all(&dir).unwrap();
            let mut series = String::new();
            for (name, text) in files {
                fs::write(dir.join(name), text).unwrap();
                series += &format!("{name}\n");
            }
            fs::write(dir.join("series"), series).unwrap();
            dir
        };
        let one = write("one", &[("0001-x.patch", patch("[PATCH 9/13] x"))]);
        let two = write("two", &[("0001-y.patch", patch("[PATCH 1/5] y, reworded"))]);
        assert_eq!(
            stack_diffs(&[one.clone()]).unwrap(),
            stack_diffs(&[two]).unwrap()
        );
        let three = write("three", &[("0001-x.patch", patch("x").replace("+1", "+2"))]);
        assert_ne!(stack_diffs(&[one]).unwrap(), stack_diffs(&[three]).unwrap());
    }
}
