//! `bench`'s second set: the hot loops of widely used crates.io crates (`bench/crates`), built
//! with the overflow-checks mode applied to those crates and not only to the binary.
//!
//! Each of `off`, `on` (panic) and `report` at `-Copt-level=2` and `3` is one `cargo build` of
//! `bench/crates` with `RUSTFLAGS=-Coverflow-checks=<mode>` and `RUSTC=<toolchain>/bin/rustc`,
//! in its own target directory. Two measurements:
//!
//! - x86_64: the instructions of each workload's function (`overflow_bench_crates::<workload>`
//!   and everything it calls), counted by callgrind with `--toggle-collect`, so that process
//!   start-up and input generation are not counted;
//! - aarch64: the bytes of each workload's functions, from `llvm-nm -S --size-sort`: the
//!   workload's function and every function defined in the objects of the package and its
//!   crates.io dependencies (their instances of generic `core` and `alloc` code included, the
//!   functions of `core` and `alloc` themselves not) that it reaches through calls or address
//!   references, found in the relocations that `llvm-objdump -dr` lists. The toolchain
//!   has no std for aarch64, so the library of `bench/crates` (which is `no_std`) is built
//!   with `-Zbuild-std=core,alloc` for `aarch64-unknown-linux-gnu`: `core` and `alloc` are then
//!   compiled in the same mode, as in the kernel.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::ctx::{Ctx, Mode};
use crate::measure::{geomean, mode_flags, parse_callgrind, ratio, Triple};
use crate::run::{capture, display, run_logged, Lock};

/// The workloads of `bench/crates/src/lib.rs` (its `WORKLOADS`; a test checks that they agree).
pub const WORKLOADS: &[&str] = &[
    "adler2",
    "atoi",
    "base64-decode",
    "base64-encode",
    "core-sum",
    "crc32fast",
    "fnv",
    "fxhash",
    "hashbrown",
    "itoa",
    "miniz-deflate",
    "miniz-inflate",
    "ryu",
];
pub const OPT_LEVELS: [u8; 2] = [2, 3];
const MODES: [Mode; 3] = [Mode::Off, Mode::Panic, Mode::Report];
const HOST: &str = "x86_64-unknown-linux-gnu";
const AARCH64: &str = "aarch64-unknown-linux-gnu";
/// The library crate of `bench/crates`, whose functions `<CRATE>::<workload>` are the roots.
const CRATE: &str = "overflow_bench_crates";
/// The binary of `bench/crates`.
const BIN: &str = "crates-bench";
/// Crates that `-Zbuild-std=core,alloc` adds; their functions are not counted.
const SYSROOT_CRATES: &[&str] = &[
    "core",
    "alloc",
    "compiler_builtins",
    "rustc_std_workspace_core",
    "rustc_std_workspace_alloc",
];
const NM: &str = "/usr/lib/llvm-22/bin/llvm-nm";
const OBJDUMP: &str = "/usr/lib/llvm-22/bin/llvm-objdump";
const CXXFILT: &str = "/usr/lib/llvm-22/bin/llvm-cxxfilt";
const BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);
const RUN_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// What [`measure`] found.
#[derive(Serialize, Default)]
pub struct CratesResults {
    /// `rustc -V` of the toolchain measured.
    pub toolchain: String,
    /// `name version` of every package of `bench/crates/Cargo.lock`.
    pub versions: Vec<String>,
    /// Instructions of each workload's function (callgrind), x86_64, per opt-level.
    pub instructions: BTreeMap<u8, BTreeMap<String, Triple>>,
    /// Bytes of each workload's functions, aarch64, per opt-level.
    pub aarch64_bytes: BTreeMap<u8, BTreeMap<String, Triple>>,
    /// How many functions were counted per opt-level and workload.
    pub aarch64_function_count: BTreeMap<u8, BTreeMap<String, Triple>>,
    /// The functions counted per workload at `-Copt-level=2` in report mode, largest first.
    pub aarch64_functions: BTreeMap<String, Vec<Function>>,
}

/// A function of an object: its demangled name (without the hash) and its size in bytes.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub bytes: u64,
}

fn project(ctx: &Ctx) -> PathBuf {
    ctx.repo.join("bench/crates")
}

/// Builds and measures `bench/crates` with `toolchain` in every mode and opt-level.
///
/// Takes the heavy lock for the whole run (six minutes on two cores from empty target
/// directories), so the caller must not hold it.
pub fn measure(ctx: &Ctx, toolchain: &Path, merge: bool) -> Result<CratesResults> {
    let lock_file = project(ctx).join("Cargo.lock");
    let lock = fs::read_to_string(&lock_file)
        .with_context(|| format!("reading {}", lock_file.display()))?;
    let mut results = CratesResults {
        toolchain: {
            let mut cmd = Command::new(toolchain.join("bin/rustc"));
            cmd.arg("-V");
            capture(cmd, Duration::from_secs(60))?.trim().to_string()
        },
        versions: lock_versions(&lock),
        ..Default::default()
    };
    // One directory per toolchain: a rebuilt rustc reports the same `rustc -vV`, so cargo
    // would take the crates built by the previous toolchain as fresh.
    let toolchain_dir = fs::canonicalize(toolchain)
        .with_context(|| format!("resolving the toolchain {}", toolchain.display()))?;
    let key = toolchain_dir
        .file_name()
        .with_context(|| format!("toolchain {} has no directory name", toolchain.display()))?;
    let dir = ctx.work.join("bench/crates").join(key);
    let _lock = Lock::acquire(&ctx.heavy_lock())?;
    // What each build printed, per workload: must be the same everywhere.
    let mut outputs: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for opt in OPT_LEVELS {
        for mode in MODES {
            let merged = if merge && mode == Mode::Report {
                "-merged"
            } else {
                ""
            };
            let target_dir = dir.join(format!("{mode}{merged}-O{opt}"));
            eprintln!("== crates, {mode}, -Copt-level={opt}: x86_64 instructions");
            build(ctx, toolchain, (mode, merge), opt, HOST, &target_dir)?;
            let exe = target_dir.join(HOST).join("release").join(BIN);
            for &workload in WORKLOADS {
                let log = target_dir.join(format!("callgrind-{workload}.log"));
                let (count, output) = callgrind(&exe, workload, &log)?;
                eprintln!("  {workload}: {count} instructions, printed {output:?}");
                results
                    .instructions
                    .entry(opt)
                    .or_default()
                    .entry(workload.to_string())
                    .or_default()
                    .set(mode, count);
                outputs.entry(workload).or_default().insert(output);
            }

            eprintln!("== crates, {mode}, -Copt-level={opt}: aarch64 bytes");
            let rlibs = build(ctx, toolchain, (mode, merge), opt, AARCH64, &target_dir)?;
            let functions = workload_functions(&rlibs)?;
            for (workload, list) in functions {
                let bytes = list.iter().map(|f| f.bytes).sum();
                eprintln!("  {workload}: {} functions, {bytes} bytes", list.len());
                results
                    .aarch64_bytes
                    .entry(opt)
                    .or_default()
                    .entry(workload.clone())
                    .or_default()
                    .set(mode, bytes);
                results
                    .aarch64_function_count
                    .entry(opt)
                    .or_default()
                    .entry(workload.clone())
                    .or_default()
                    .set(mode, list.len() as u64);
                if opt == 2 && mode == Mode::Report {
                    results.aarch64_functions.insert(workload, list);
                }
            }
        }
    }
    for (workload, outs) in &outputs {
        if outs.len() != 1 {
            bail!(
                "the workload {workload} printed different results in different modes or \
                 opt-levels: {outs:?}"
            );
        }
    }
    Ok(results)
}

/// `cargo build` of `bench/crates` for `target` (only the library, with `core` and `alloc`
/// built from the toolchain's source, for aarch64) with the [`mode_flags`] of `mode`; returns the
/// `.rlib`s of this build, as cargo lists them.
fn build(
    ctx: &Ctx,
    toolchain: &Path,
    (mode, merge): (Mode, bool),
    opt: u8,
    target: &str,
    target_dir: &Path,
) -> Result<Vec<PathBuf>> {
    let mut cmd = Command::new("cargo");
    cmd.current_dir(project(ctx))
        .env("RUSTC", toolchain.join("bin/rustc"))
        // `-Coverflow-checks=report` and `-Zbuild-std` are unstable.
        .env("RUSTC_BOOTSTRAP", "1")
        // With `--target`, RUSTFLAGS applies to every crate of the target (and not to build
        // scripts): the dependencies are built in the mode too.
        .env("RUSTFLAGS", mode_flags(mode, merge).join(" "))
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .args(["build", "--release", "--locked", "--target", target])
        .arg("--message-format=json-render-diagnostics")
        .arg("--target-dir")
        .arg(target_dir)
        .arg("--config")
        .arg(format!("profile.release.opt-level={opt}"));
    if target != HOST {
        cmd.args(["--lib", "-Zbuild-std=core,alloc"]);
    }
    let label = format!("bench-crates-{target}-{mode}-O{opt}");
    let log = ctx.log(&label)?;
    run_logged(cmd, &label, &log, BUILD_TIMEOUT).with_context(|| {
        format!(
            "building bench/crates for {target} in {mode} mode failed; crates missing from \
             cargo's cache come from crates.io (`setup` fetches them)"
        )
    })?;
    Ok(artifact_rlibs(&fs::read_to_string(&log)?))
}

/// The `.rlib`s in the `compiler-artifact` messages of `cargo build --message-format=json`
/// (the lines of `log` that are JSON objects): the ones of this build, not older ones left in
/// the target directory.
fn artifact_rlibs(log: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = log
        .lines()
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .flat_map(|m| {
            m["filenames"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str())
                .filter(|f| f.ends_with(".rlib"))
                .map(PathBuf::from)
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The instructions of `exe workload`'s workload function under callgrind, and what it printed.
fn callgrind(exe: &Path, workload: &str, log: &Path) -> Result<(u64, String)> {
    let mut cmd = Command::new("valgrind");
    cmd.args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(format!("--toggle-collect={}", root(workload)))
        .arg(format!("--log-file={}", log.display()))
        .arg(exe)
        .arg(workload);
    let shown = display(&cmd);
    let output = capture(cmd, RUN_TIMEOUT).with_context(|| {
        format!(
            "{shown} failed (an overflow in report mode panics in the default handler); \
             callgrind's log: {}",
            log.display()
        )
    })?;
    let text = fs::read_to_string(log).with_context(|| format!("reading {}", log.display()))?;
    let count = parse_callgrind(&text)
        .with_context(|| format!("callgrind printed no `Collected` line in {}", log.display()))?;
    if count == 0 {
        bail!(
            "callgrind counted no instruction in {}: the workload function was not found ({shown})",
            root(workload)
        );
    }
    Ok((count, output.trim().to_string()))
}

/// The demangled path of a workload's function (without the hash).
fn root(workload: &str) -> String {
    format!("{CRATE}::{}", workload.replace('-', "_"))
}

/// `name version` of every `[[package]]` of a `Cargo.lock`, except this package.
fn lock_versions(lock: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut name = None;
    for line in lock.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            if n != "overflow-bench-crates" {
                out.push(format!("{n} {}", v.trim_matches('"')));
            }
        }
    }
    out
}

/// The crate of an `.rlib` from its file name, `lib<crate>-<hash>.rlib`.
fn rlib_crate(path: &Path) -> Option<&str> {
    let stem = path
        .file_name()?
        .to_str()?
        .strip_prefix("lib")?
        .strip_suffix(".rlib")?;
    Some(stem.rsplit_once('-').map_or(stem, |(k, _)| k))
}

/// The functions counted for each workload, largest first, from `rlibs` (but those of the
/// sysroot crates).
fn workload_functions(rlibs: &[PathBuf]) -> Result<BTreeMap<String, Vec<Function>>> {
    let rlibs: Vec<&PathBuf> = rlibs
        .iter()
        .filter(|p| rlib_crate(p).is_some_and(|c| !SYSROOT_CRATES.contains(&c)))
        .collect();
    if !rlibs.iter().any(|p| rlib_crate(p) == Some(CRATE)) {
        bail!("cargo built no lib{CRATE}-*.rlib: {rlibs:?}");
    }
    let mut sizes = BTreeMap::new();
    let mut graph = BTreeMap::new();
    for rlib in rlibs {
        let mut cmd = Command::new(NM);
        cmd.args(["-S", "--size-sort", "--defined-only"]).arg(rlib);
        sizes.extend(parse_nm(&capture(cmd, RUN_TIMEOUT)?));
        let mut cmd = Command::new(OBJDUMP);
        cmd.args(["-dr", "--no-show-raw-insn"]).arg(rlib);
        for (function, targets) in parse_relocations(&capture(cmd, RUN_TIMEOUT)?) {
            graph
                .entry(function)
                .or_insert_with(BTreeSet::new)
                .extend(targets);
        }
    }
    let names = demangle_all(sizes.keys())?;
    let mut out = BTreeMap::new();
    for &workload in WORKLOADS {
        let want = root(workload);
        let roots: Vec<&String> = names
            .iter()
            .filter(|(_, d)| **d == want)
            .map(|(m, _)| m)
            .collect();
        let [start] = roots[..] else {
            bail!(
                "{} functions {want} in lib{CRATE}-*.rlib ({roots:?}); expected one \
                 (#[inline(never)])",
                roots.len()
            );
        };
        let mut list: Vec<Function> = reachable(start, &graph, &sizes)
            .into_iter()
            .map(|m| Function {
                name: names[&m].clone(),
                bytes: sizes[&m],
            })
            .collect();
        list.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.name.cmp(&b.name)));
        out.insert(workload.to_string(), list);
    }
    Ok(out)
}

/// The functions of `llvm-nm -S` output (types `t`, `T`, `w`, `W`): mangled name to size.
/// Members of an archive are merged; a name defined twice (an identical instantiation in two
/// crates) keeps its larger size.
fn parse_nm(listing: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in listing.lines() {
        let mut fields = line.split_whitespace();
        let (Some(_addr), Some(size), Some(kind), Some(name), None) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            continue;
        };
        let Ok(size) = u64::from_str_radix(size, 16) else {
            continue;
        };
        if matches!(kind, "t" | "T" | "w" | "W") {
            let entry = out.entry(name.to_string()).or_insert(0);
            *entry = size.max(*entry);
        }
    }
    out
}

/// The symbols that each function of `llvm-objdump -dr` output refers to through a relocation
/// (calls, tail calls, addresses), with a section symbol `.text.NAME` read as `NAME`.
fn parse_relocations(listing: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in listing.lines() {
        if let Some(name) = line
            .split_once(" <")
            .filter(|(addr, _)| !addr.is_empty() && addr.chars().all(|c| c.is_ascii_hexdigit()))
            .and_then(|(_, rest)| rest.strip_suffix(">:"))
        {
            current = Some(name.to_string());
            out.entry(name.to_string()).or_default();
            continue;
        }
        if line.starts_with("Disassembly of section") || line.contains("file format") {
            current = None;
            continue;
        }
        let Some(function) = &current else {
            continue;
        };
        let mut fields = line.split_whitespace();
        let (Some(offset), Some(kind), Some(target)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if !offset.ends_with(':') || !kind.starts_with("R_") {
            continue;
        }
        let target = target.split(['+', '-']).next().unwrap_or(target);
        let target = [".text.unlikely.", ".text.hot.", ".text."]
            .iter()
            .find_map(|p| target.strip_prefix(p))
            .unwrap_or(target);
        if !target.is_empty() {
            out.get_mut(function)
                .expect("inserted above")
                .insert(target.to_string());
        }
    }
    out
}

/// The functions reachable from `start` in `graph` that have a size (are defined in the objects
/// read), `start` included.
fn reachable(
    start: &str,
    graph: &BTreeMap<String, BTreeSet<String>>,
    sizes: &BTreeMap<String, u64>,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![start.to_string()];
    while let Some(f) = todo.pop() {
        if !sizes.contains_key(&f) || !seen.insert(f.clone()) {
            continue;
        }
        if let Some(targets) = graph.get(&f) {
            todo.extend(targets.iter().filter(|t| !seen.contains(*t)).cloned());
        }
    }
    seen
}

/// Demangled names (without a legacy hash) of mangled symbols, by `llvm-cxxfilt`, which reads
/// both the v0 scheme (the default of this toolchain) and the legacy one.
fn demangle_all<'a>(
    names: impl IntoIterator<Item = &'a String>,
) -> Result<BTreeMap<String, String>> {
    let names: Vec<&String> = names.into_iter().collect();
    let mut out = BTreeMap::new();
    for chunk in names.chunks(256) {
        let mut cmd = Command::new(CXXFILT);
        cmd.args(chunk);
        let text = capture(cmd, RUN_TIMEOUT)?;
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() != chunk.len() {
            bail!(
                "{CXXFILT} printed {} lines for {} names",
                lines.len(),
                chunk.len()
            );
        }
        for (mangled, demangled) in chunk.iter().zip(lines) {
            out.insert(mangled.to_string(), strip_hash(demangled).to_string());
        }
    }
    Ok(out)
}

/// A demangled legacy name without its `::h0123456789abcdef` hash.
fn strip_hash(name: &str) -> &str {
    match name.rsplit_once("::h") {
        Some((path, hash)) if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
            path
        }
        _ => name,
    }
}

fn table(
    w: &mut String,
    rows: &BTreeMap<String, Triple>,
    extra: Option<&BTreeMap<String, Triple>>,
) {
    let counts = if extra.is_some() {
        " functions (off/panic/report) |"
    } else {
        ""
    };
    let rule = if extra.is_some() { "---:|" } else { "" };
    writeln!(
        w,
        "| workload | off | panic | report | report/panic | panic/off | report/off |{counts}"
    )
    .unwrap();
    writeln!(w, "|---|---:|---:|---:|---:|---:|---:|{rule}").unwrap();
    for (name, t) in rows {
        let counts = extra
            .and_then(|e| e.get(name))
            .map(|c| format!(" {}/{}/{} |", c.off, c.panic, c.report))
            .unwrap_or_default();
        writeln!(
            w,
            "| {name} | {} | {} | {} | {:.4} | {:.4} | {:.4} |{counts}",
            t.off,
            t.panic,
            t.report,
            ratio(t.report, t.panic),
            ratio(t.panic, t.off),
            ratio(t.report, t.off),
        )
        .unwrap();
    }
    writeln!(
        w,
        "| geometric mean | | | | {:.4} | {:.4} | {:.4} |{}\n",
        geomean(rows, |t| ratio(t.report, t.panic)),
        geomean(rows, |t| ratio(t.panic, t.off)),
        geomean(rows, |t| ratio(t.report, t.off)),
        if extra.is_some() { " |" } else { "" }
    )
    .unwrap();
}

/// The section of `BENCHMARKS.md` for [`CratesResults`].
pub fn markdown(r: &CratesResults) -> String {
    let mut s = String::new();
    let w = &mut s;
    writeln!(w, "## Crates from crates.io\n").unwrap();
    writeln!(
        w,
        "The hot loops of widely used crates, in `bench/crates` (one `#[inline(never)]` \
         function per workload in `src/lib.rs`), with these exact versions from its \
         `Cargo.lock`: {}. Default features are off: no SIMD (`base64` without `simd-unsafe`, \
         `miniz_oxide` without `simd`), and `crc32fast` runs its table-driven path \
         (`Hasher::internal_new_baseline`), neither PCLMULQDQ nor the Arm CRC instructions. \
         Each mode and opt-level is a `cargo build --release` (`codegen-units = 1`) with \
         `RUSTFLAGS=-Coverflow-checks=<mode>`, which applies the mode to every crate. \
         Toolchain: {}.\n",
        r.versions
            .iter()
            .map(|v| format!("`{v}`"))
            .collect::<Vec<_>>()
            .join(", "),
        r.toolchain
    )
    .unwrap();
    if !r.instructions.is_empty() {
        writeln!(w, "### Instructions, x86_64\n").unwrap();
        writeln!(
            w,
            "Counted by `valgrind --tool=callgrind \
             --toggle-collect=overflow_bench_crates::<workload>`: the workload's function and \
             everything it calls, not start-up or input generation. The standard library is \
             the toolchain's (built without overflow checks); it only allocates and copies \
             here. No workload overflows: every build printed the same checksums.\n"
        )
        .unwrap();
    }
    for (opt, rows) in &r.instructions {
        writeln!(w, "`-Copt-level={opt}`:\n").unwrap();
        table(w, rows, None);
    }
    if !r.aarch64_bytes.is_empty() {
        writeln!(w, "### Code size, aarch64\n").unwrap();
        writeln!(
            w,
            "Bytes of each workload's functions for `aarch64-unknown-linux-gnu`, from \
             `llvm-nm -S --size-sort`. The toolchain has no std for aarch64, so only the \
             library (which is `no_std`) is built, with `-Zbuild-std=core,alloc`: `core` and \
             `alloc` are compiled in the same mode, as in the kernel. Counted: the workload's \
             function and every function defined in the objects of the package and its \
             crates.io dependencies that it reaches through calls or address references (the \
             relocations listed by `llvm-objdump -dr`), including their instances of generic \
             `core` and `alloc` code (`Vec::resize`, or in report mode a report entry point \
             for an operand type that `core` does not provide). Not counted: the functions of \
             `core`, `alloc` and `compiler_builtins` themselves (the panic and report entry \
             points, vector growth, `memcpy`), which every workload shares.\n"
        )
        .unwrap();
    }
    for (opt, rows) in &r.aarch64_bytes {
        writeln!(w, "`-Copt-level={opt}`:\n").unwrap();
        table(w, rows, r.aarch64_function_count.get(opt));
    }
    if !r.aarch64_functions.is_empty() {
        writeln!(
            w,
            "The functions counted at `-Copt-level=2` in report mode, with their bytes:\n"
        )
        .unwrap();
        for (workload, list) in &r.aarch64_functions {
            let names: Vec<String> = list
                .iter()
                .map(|f| format!("`{}` {}", f.name, f.bytes))
                .collect();
            writeln!(w, "- {workload}: {}", names.join(", ")).unwrap();
        }
        writeln!(w).unwrap();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_agree_with_the_crate() {
        let lib = include_str!("../../bench/crates/src/lib.rs");
        let list = lib
            .split_once("pub const WORKLOADS: &[&str] = &[")
            .and_then(|(_, rest)| rest.split_once("];"))
            .map(|(list, _)| list)
            .expect("bench/crates/src/lib.rs has a WORKLOADS list");
        let names: Vec<&str> = list
            .split(',')
            .map(|n| n.trim().trim_matches('"'))
            .filter(|n| !n.is_empty())
            .collect();
        assert_eq!(names, WORKLOADS);
        for w in WORKLOADS {
            let f = format!("pub fn {}(", w.replace('-', "_"));
            assert!(lib.contains(&f), "bench/crates/src/lib.rs has no {f}");
        }
    }

    #[test]
    fn rlibs_of_this_build() {
        let log = "$ cargo build --message-format=json-render-diagnostics\n\
            {\"reason\":\"compiler-artifact\",\"target\":{\"name\":\"adler2\"},\
            \"filenames\":[\"/t/deps/libadler2-1.rlib\",\"/t/deps/libadler2-1.rmeta\"],\"fresh\":true}\n\
            {\"reason\":\"build-script-executed\",\"package_id\":\"x\"}\n\
            {\"reason\":\"compiler-artifact\",\"target\":{\"name\":\"build-script-build\"},\
            \"filenames\":[\"/t/build/x/build_script_build-2\"]}\n\
               Compiling core v0.0.0\n\
            {\"reason\":\"compiler-artifact\",\"filenames\":[\"/t/deps/libcore-3.rlib\"]}\n\
            {\"reason\":\"build-finished\",\"success\":true}\n";
        assert_eq!(
            artifact_rlibs(log),
            [
                PathBuf::from("/t/deps/libadler2-1.rlib"),
                PathBuf::from("/t/deps/libcore-3.rlib")
            ]
        );
        assert_eq!(
            rlib_crate(Path::new("/t/deps/liboverflow_bench_crates-80e9.rlib")),
            Some(CRATE)
        );
        assert_eq!(
            rlib_crate(Path::new("/t/deps/libcore-3.rlib")),
            Some("core")
        );
        assert_eq!(rlib_crate(Path::new("/t/deps/libcore-3.rmeta")), None);
    }

    #[test]
    fn versions_from_the_lock_file() {
        let lock = "version = 4\n\n[[package]]\nname = \"adler2\"\nversion = \"2.0.1\"\n\
                    source = \"registry+https://github.com/rust-lang/crates.io-index\"\n\
                    checksum = \"abc\"\n\n[[package]]\nname = \"overflow-bench-crates\"\n\
                    version = \"0.1.0\"\ndependencies = [\n \"adler2\",\n]\n";
        assert_eq!(lock_versions(lock), ["adler2 2.0.1"]);
        let real = include_str!("../../bench/crates/Cargo.lock");
        let versions = lock_versions(real);
        assert!(versions.iter().any(|v| v.starts_with("miniz_oxide ")));
        assert!(!versions
            .iter()
            .any(|v| v.starts_with("overflow-bench-crates")));
    }

    #[test]
    fn dependencies_are_pinned() {
        let manifest = include_str!("../../bench/crates/Cargo.toml");
        let deps = manifest
            .split_once("[dependencies]")
            .and_then(|(_, rest)| rest.split("\n[").next())
            .expect("a [dependencies] table");
        for line in deps.lines().filter(|l| l.contains("version")) {
            assert!(
                line.contains("version = \"="),
                "not an exact version: {line}"
            );
        }
    }

    #[test]
    fn legacy_hashes_are_stripped() {
        assert_eq!(
            strip_hash("overflow_bench_crates::adler2::h0123456789abcdef"),
            "overflow_bench_crates::adler2"
        );
        assert_eq!(
            strip_hash("<hashbrown::raw::RawTable<(u64, u64)>>::reserve_rehash"),
            "<hashbrown::raw::RawTable<(u64, u64)>>::reserve_rehash"
        );
        assert_eq!(strip_hash("a::hash"), "a::hash");
    }

    #[test]
    fn nm_functions_with_sizes() {
        let listing = "\nlib.rmeta:\n\nx-cgu.0.rcgu.o:\n\
                       0000000000000000 0000000000000010 r .Lanon.1\n\
                       0000000000000000 0000000000000024 t _ZN1a1f17h0123456789abcdefE\n\
                       0000000000000030 00000000000000f0 T _ZN1a1g17h0123456789abcdefE\n\
                       0000000000000000 0000000000000400 R _ZN1a5TABLE17h0123456789abcdefE\n\
                       y-cgu.0.rcgu.o:\n\
                       0000000000000000 0000000000000028 t _ZN1a1f17h0123456789abcdefE\n";
        let sizes = parse_nm(listing);
        assert_eq!(sizes.len(), 2);
        assert_eq!(sizes["_ZN1a1f17h0123456789abcdefE"], 0x28);
        assert_eq!(sizes["_ZN1a1g17h0123456789abcdefE"], 0xf0);
    }

    /// `llvm-objdump -dr --no-show-raw-insn` of an rlib, shortened.
    const OBJDUMP_LISTING: &str = "
In archive libx.rlib:

x-cgu.0.rcgu.o:\tfile format elf64-littleaarch64

Disassembly of section .text._ZN1x4root17hE:

0000000000000000 <_ZN1x4root17hE>:
       0: \tstp\tx29, x30, [sp, #-0x10]!
       4: \tbl\t0x4 <_ZN1x4root17hE+0x4>
\t\t0000000000000004:  R_AARCH64_CALL26\t.text._ZN1x5local17hE
       8: \tadrp\tx0, 0x0 <_ZN1x4root17hE>
\t\t0000000000000008:  R_AARCH64_ADR_PREL_PG_HI21\t.rodata..Lanon.0+0x10
       c: \tb\t0xc <_ZN1x4root17hE+0xc>
\t\t000000000000000c:  R_AARCH64_JUMP26\t_ZN1y6global17hE

Disassembly of section .text._ZN1x5local17hE:

0000000000000000 <_ZN1x5local17hE>:
       0: \tbl\t0x0 <_ZN1x5local17hE>
\t\t0000000000000000:  R_AARCH64_CALL26\t_ZN4core9panicking5panic17hE
       4: \tret

0000000000000000 <_ZN1x6unused17hE>:
       0: \tret
";

    #[test]
    fn relocations_per_function() {
        let graph = parse_relocations(OBJDUMP_LISTING);
        assert_eq!(
            graph["_ZN1x4root17hE"],
            BTreeSet::from([
                "_ZN1x5local17hE".to_string(),
                ".rodata..Lanon.0".to_string(),
                "_ZN1y6global17hE".to_string()
            ])
        );
        assert_eq!(
            graph["_ZN1x5local17hE"],
            BTreeSet::from(["_ZN4core9panicking5panic17hE".to_string()])
        );
        assert!(graph["_ZN1x6unused17hE"].is_empty());
    }

    #[test]
    fn only_defined_reachable_functions_count() {
        let graph = parse_relocations(OBJDUMP_LISTING);
        let sizes = BTreeMap::from([
            ("_ZN1x4root17hE".to_string(), 16),
            ("_ZN1x5local17hE".to_string(), 8),
            ("_ZN1x6unused17hE".to_string(), 4),
            ("_ZN1y6global17hE".to_string(), 32),
        ]);
        let found = reachable("_ZN1x4root17hE", &graph, &sizes);
        assert_eq!(
            found,
            BTreeSet::from([
                "_ZN1x4root17hE".to_string(),
                "_ZN1x5local17hE".to_string(),
                "_ZN1y6global17hE".to_string()
            ])
        );
    }

    #[test]
    fn markdown_has_every_ratio() {
        let t = Triple {
            off: 100,
            panic: 110,
            report: 121,
        };
        let rows = BTreeMap::from([("adler2".to_string(), t), ("atoi".to_string(), t)]);
        let results = CratesResults {
            toolchain: "rustc 1.96.0-dev".into(),
            versions: vec!["adler2 2.0.1".into()],
            instructions: BTreeMap::from([(2, rows.clone()), (3, rows.clone())]),
            aarch64_bytes: BTreeMap::from([(2, rows.clone())]),
            aarch64_function_count: BTreeMap::from([(2, rows.clone())]),
            aarch64_functions: BTreeMap::from([(
                "adler2".to_string(),
                vec![Function {
                    name: "overflow_bench_crates::adler2".into(),
                    bytes: 120,
                }],
            )]),
        };
        let md = markdown(&results);
        assert!(md.contains("### Instructions, x86_64\n"));
        assert!(md.contains("`-Copt-level=3`:\n\n| workload | off |"));
        assert!(md.contains("| adler2 | 100 | 110 | 121 | 1.1000 | 1.1000 | 1.2100 |\n"));
        assert!(md.contains("| atoi | 100 | 110 | 121 | 1.1000 | 1.1000 | 1.2100 | 100/110/121 |"));
        assert!(md.contains("| geometric mean | | | | 1.1000 | 1.1000 | 1.2100 |\n"));
        assert!(md.contains("- adler2: `overflow_bench_crates::adler2` 120"));
        assert!(md.contains("`adler2 2.0.1`"));
    }
}
