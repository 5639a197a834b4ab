//! Measurements that `bench`, the crates.io workloads and `drivers` share: the three modes'
//! rustc flags, a value per mode and its ratios, callgrind counts and `.text` sizes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use crate::ctx::{overflow_checks_flags, Mode};
use crate::run::capture;

const SIZE: &str = "/usr/lib/llvm-22/bin/llvm-size";

/// The `-Coverflow-checks` value of a mode.
pub fn flag(mode: Mode) -> &'static str {
    match mode {
        Mode::Off => "off",
        Mode::Panic => "on",
        Mode::Report => "report",
    }
}

/// The rustc flags of a mode: `-Coverflow-checks`, and in report mode with `merge`,
/// `-Zmerge-overflow-reports`.
pub fn mode_flags(mode: Mode, merge: bool) -> Vec<String> {
    let mut flags = overflow_checks_flags(flag(mode));
    if merge && mode == Mode::Report {
        flags.push("-Zmerge-overflow-reports".to_string());
    }
    flags
}

/// One measurement in the three modes.
#[derive(Serialize, Clone, Copy, Default)]
pub struct Triple {
    pub off: u64,
    pub panic: u64,
    pub report: u64,
}

impl Triple {
    pub fn set(&mut self, mode: Mode, value: u64) {
        match mode {
            Mode::Off => self.off = value,
            Mode::Panic => self.panic = value,
            Mode::Report => self.report = value,
        }
    }

    pub fn report_panic(&self) -> f64 {
        ratio(self.report, self.panic)
    }

    pub fn report_off(&self) -> f64 {
        ratio(self.report, self.off)
    }

    pub fn panic_off(&self) -> f64 {
        ratio(self.panic, self.off)
    }
}

impl std::ops::Add for Triple {
    type Output = Triple;

    fn add(self, other: Triple) -> Triple {
        Triple {
            off: self.off + other.off,
            panic: self.panic + other.panic,
            report: self.report + other.report,
        }
    }
}

impl std::iter::Sum for Triple {
    fn sum<I: Iterator<Item = Triple>>(iter: I) -> Triple {
        iter.fold(Triple::default(), |a, b| a + b)
    }
}

pub fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        f64::NAN
    } else {
        a as f64 / b as f64
    }
}

/// The geometric mean of `f` over the rows of a table of workloads.
pub fn geomean(rows: &BTreeMap<String, Triple>, f: impl Fn(&Triple) -> f64) -> f64 {
    let logs: f64 = rows.values().map(|t| f(t).ln()).sum();
    (logs / rows.len() as f64).exp()
}

/// The count of callgrind's `==PID== Collected : N` line.
pub fn parse_callgrind(stderr: &str) -> Option<u64> {
    stderr
        .lines()
        .find_map(|l| l.split_once("Collected :"))
        .and_then(|(_, n)| n.trim().parse().ok())
}

/// The sum of the sizes of the `.text` and `.text.*` sections of an object, from `llvm-size -A`.
pub fn text_size(obj: &Path) -> Result<u64> {
    let mut cmd = Command::new(SIZE);
    cmd.arg("-A").arg(obj);
    Ok(parse_text_size(&capture(cmd, Duration::from_secs(120))?))
}

/// The sizes of an object's sections by kind, from `llvm-size -A`: `text` (`.text*`), `rodata`
/// (`.rodata*`), `data` (`.data*`, with `.data.rel.ro*`) and `__bug_table`.
pub fn section_sizes(obj: &Path) -> Result<BTreeMap<&'static str, u64>> {
    let mut cmd = Command::new(SIZE);
    cmd.arg("-A").arg(obj);
    Ok(parse_section_sizes(&capture(
        cmd,
        Duration::from_secs(120),
    )?))
}

/// The kinds of section that `section_sizes()` sums, in the order reports list them.
pub const SECTION_KINDS: [&str; 4] = ["text", "rodata", "data", "__bug_table"];

fn parse_section_sizes(listing: &str) -> BTreeMap<&'static str, u64> {
    let mut sizes = BTreeMap::new();
    for l in listing.lines() {
        let mut fields = l.split_whitespace();
        let (Some(name), Some(size)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Ok(size) = size.parse::<u64>() else {
            continue;
        };
        let kind = SECTION_KINDS.into_iter().find(|kind| {
            let prefix = if kind.starts_with('_') {
                kind.to_string()
            } else {
                format!(".{kind}")
            };
            name == prefix || name.starts_with(&format!("{prefix}."))
        });
        if let Some(kind) = kind {
            *sizes.entry(kind).or_default() += size;
        }
    }
    sizes
}

fn parse_text_size(listing: &str) -> u64 {
    parse_section_sizes(listing)
        .get("text")
        .copied()
        .unwrap_or(0)
}

/// The objects of a build directory that rustc compiled, from kbuild's `.*.o.cmd` files.
pub fn rust_objects(out: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut dirs = vec![out.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir)?.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().to_string();
            if entry.file_type()?.is_dir() {
                dirs.push(path);
            } else if let Some(obj) = name
                .strip_prefix('.')
                .and_then(|n| n.strip_suffix(".o.cmd"))
            {
                let cmd = fs::read_to_string(&path).unwrap_or_default();
                let object = dir.join(format!("{obj}.o"));
                if compiled_by_rustc(&cmd) && object.exists() {
                    found.push(object);
                }
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Whether a kbuild `.*.o.cmd` file says that rustc, or clippy-driver in place of rustc
/// (`make CLIPPY=1`), compiled the object.
pub fn compiled_by_rustc(cmd_file: &str) -> bool {
    let first = cmd_file.lines().next().unwrap_or_default();
    (first.contains("rustc") || first.contains("clippy-driver")) && first.contains("--emit=obj")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrind_count() {
        let text = "==24965== Events    : Ir\n==24965== Collected : 7151747\n==24965== \n";
        assert_eq!(parse_callgrind(text), Some(7151747));
        assert_eq!(parse_callgrind("==1== Events : Ir\n"), None);
    }

    #[test]
    fn sections_are_summed_by_kind() {
        let listing = "a.o  :\nsection   size   addr\n.text  10  0\n.text.f  5  0\n\
                       .rodata  7  0\n.rodata.str1.1  3  0\n.data  4  0\n\
                       .data.rel.ro  2  0\n__bug_table  24  0\n.rela__bug_table  48  0\n\
                       .textual  1  0\nTotal  104\n";
        let sizes = parse_section_sizes(listing);
        assert_eq!(sizes["text"], 15);
        assert_eq!(sizes["rodata"], 10);
        assert_eq!(sizes["data"], 6);
        assert_eq!(sizes["__bug_table"], 24);
    }

    #[test]
    fn text_sections_are_summed() {
        let listing = "sites.o  :\nsection   size   addr\n.text        0      0\n\
                       .text.site_0  12  0\n.text.site_1  20  0\n.rodata  100  0\n\
                       .rela.text.site_0  24 0\nTotal  156\n";
        assert_eq!(parse_text_size(listing), 32);
    }

    #[test]
    fn ratios() {
        let t = Triple {
            off: 100,
            panic: 150,
            report: 165,
        };
        assert!((t.report_panic() - 1.1).abs() < 1e-9);
        assert!((t.report_off() - 1.65).abs() < 1e-9);
        assert!(Triple::default().report_panic().is_nan());
    }

    #[test]
    fn objects_compiled_by_rustc_or_clippy() {
        let rustc =
            "savedcmd_samples/rust/rust_minimal.o := OBJTREE=/o /t/bin/rustc --emit=obj=x.o\n";
        let clippy = "savedcmd_x.o := OBJTREE=/o /t/bin/clippy-driver --emit=obj=x.o\n";
        let c = "savedcmd_x.o := clang-22 -c -o x.o x.c\n";
        let dep_only = "savedcmd_x.rsi := /t/bin/rustc --emit=dep-info=x.d\n";
        assert!(compiled_by_rustc(rustc));
        assert!(compiled_by_rustc(clippy));
        assert!(!compiled_by_rustc(c));
        assert!(!compiled_by_rustc(dep_only));
    }
}
