//! `runtime`: what each overflow-checks mode costs at run time in the kernel, in instructions.
//!
//! Under QEMU's `-icount shift=0,sleep=off` the guest's clock advances one nanosecond per
//! executed instruction, so the times the guest reads are instruction counts, and they repeat
//! from one run to the next whatever else the host does. Per architecture, kernels configured on
//! `make allnoconfig` with `configs/kernel/runtime.config` are built in each mode: off and panic
//! in one build directory (going from one to the other rebuilds only Rust), report in another
//! (its trap changes the architecture's bug header, which nearly every C file includes). Each
//! kernel boots twice with one vCPU and measures:
//! - 4 KiB `O_DIRECT` reads and writes through C `null_blk` and Rust `rnull`, both with
//!   `irqmode=0`, so that a request completes in the context that submits it: `dd` runs of two
//!   lengths between marks written to the kernel log, whose difference cancels `dd`'s start-up;
//! - the drm_panic screen drawn through its debugfs trigger, as the `user` screen and as the QR
//!   screen, whose code the Rust encoder (`drivers/gpu/drm/drm_panic_qr.rs`) makes from the kernel
//!   log: the most arithmetic-heavy Rust of 7.2 that QEMU can run, where rnull is a thin Rust
//!   layer over C blk-mq; draws of two counts between marks, as for `dd`;
//! - the storm (`harness/storm`): an overflow repeated at a site reported already, with a `u32`
//!   add (a trap on x86_64 and arm64) and a `u128` add (a call everywhere), and a `WARN_ON_ONCE()`
//!   repeated in C for reference, each beside the same loop without the overflow.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::boot;
use crate::ctx::{Arch, Ctx, Mode};
use crate::kernel;
use crate::run::Lock;

#[derive(clap::Args, Default)]
pub struct Args {
    /// Architectures to measure (repeatable; default: x86_64 and arm64).
    #[arg(long, value_enum)]
    pub arch: Vec<Arch>,
}

/// The modes, in the order they are built.
const MODES: [Mode; 3] = [Mode::Off, Mode::Panic, Mode::Report];

/// Boots per kernel: the counts of the second must repeat those of the first.
const RUNS: usize = 2;

/// The `dd` lengths, in 4 KiB requests: the cost of one request is the difference of the two
/// runs' times divided by the difference of their lengths.
const SHORT: u64 = 2048;
const LONG: u64 = 10240;

/// The panic screens drawn, with the draws of the two runs: `user` draws the same screen without
/// the encoder.
const SCREENS: [&str; 2] = ["user", "qr_code"];
const DRAWS_SHORT: u64 = 2;
const DRAWS_LONG: u64 = 6;

/// Instructions per operation, by case, then mode, one value per boot.
pub type Counts = BTreeMap<String, BTreeMap<String, Vec<f64>>>;

/// The measurements of one architecture.
#[derive(Serialize, Default)]
pub struct Results {
    pub counts: Counts,
}

impl Results {
    /// The largest relative difference between two boots of the same kernel.
    pub fn worst_disagreement(&self) -> f64 {
        self.counts
            .values()
            .flat_map(|modes| modes.values())
            .filter_map(|runs| {
                let (min, max) = runs
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
                (runs.len() > 1 && min > 0.0).then(|| (max - min) / min)
            })
            .fold(0.0, f64::max)
    }
}

/// The block devices and directions the guest measures, as `<device>-<read|write>`.
const IO_CASES: [(&str, &str); 4] = [
    ("nullb0", "read"),
    ("nullb0", "write"),
    ("rnullb0", "read"),
    ("rnullb0", "write"),
];

pub fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    let toolchain = kernel::current_toolchain(ctx)?;
    let arches = if args.arch.is_empty() {
        vec![Arch::X86_64, Arch::Arm64]
    } else {
        args.arch.clone()
    };
    let mut text = String::new();
    for arch in arches {
        let results = measure(ctx, &toolchain, arch)?;
        text += &markdown(arch, &results);
    }
    print!("{text}");
    Ok(())
}

/// Builds and boots the kernels of `arch` in every mode and returns their counts.
pub fn measure(ctx: &Ctx, toolchain: &Path, arch: Arch) -> Result<Results> {
    let src = ctx.linux_src();
    let script = script();
    let mut results = Results::default();
    for mode in MODES {
        let out = ctx.work.join("runtime").join(match mode {
            Mode::Report => format!("{arch}-report"),
            Mode::Off | Mode::Panic => arch.to_string(),
        });
        let mut files = vec![
            "kernel/base.config".to_string(),
            format!("kernel/{arch}.config"),
            "kernel/runtime.config".into(),
        ];
        let arch_fragment = format!("kernel/runtime-{arch}.config");
        if ctx.repo.join("configs").join(&arch_fragment).exists() {
            files.push(arch_fragment);
        }
        let fragment = kernel::read_fragment(ctx, &files, mode)?;
        let storm = {
            let _lock = Lock::acquire(&ctx.heavy_lock())?;
            kernel::make_kernel(
                ctx,
                &src,
                &out,
                arch,
                &ctx.make_vars(toolchain),
                &fragment,
                kernel::Base::AllNo,
                &format!("runtime-build-{arch}-{mode}"),
            )?;
            build_storm(ctx, toolchain, &out, arch, mode)?
        };
        for run in 1..=RUNS {
            let label = format!("runtime-boot-{arch}-{mode}-{run}");
            let boot = boot::boot_build(
                ctx,
                &out,
                &boot::Args {
                    arch,
                    mode,
                    script: Some(script.clone()),
                    extra_modules: storm.clone(),
                    load_modules: false,
                    qemu_args: qemu_args(arch),
                    smp: 1,
                    timeout: 1800,
                    ..Default::default()
                },
                &label,
            )?;
            let counts = parse(&boot.dmesg)
                .with_context(|| format!("reading the counts of {}", boot.console_log.display()))?;
            for (case, value) in counts {
                results
                    .counts
                    .entry(case)
                    .or_default()
                    .entry(mode.to_string())
                    .or_default()
                    .push(value);
            }
        }
    }
    Ok(results)
}

/// Builds `harness/storm` with `make M=` against the build in `out`; returns its modules. The
/// caller holds the heavy lock.
fn build_storm(
    ctx: &Ctx,
    toolchain: &Path,
    out: &Path,
    arch: Arch,
    mode: Mode,
) -> Result<Vec<PathBuf>> {
    let dir = ctx
        .work
        .join("runtime")
        .join(format!("storm-{arch}-{mode}"));
    kernel::build_external_modules(
        ctx,
        toolchain,
        out,
        arch,
        &ctx.repo.join("harness/storm"),
        &dir,
        &format!("runtime-storm-{arch}-{mode}"),
    )?;
    Ok(vec![dir.join("storm_rust.ko"), dir.join("storm_c.ko")])
}

/// `-icount`, and the display that drm_panic draws on.
fn qemu_args(arch: Arch) -> Vec<String> {
    ["-icount", "shift=0,sleep=off"]
        .iter()
        .chain(&boot::bochs_display(arch))
        .map(|s| s.to_string())
        .collect()
}

/// The guest's script: the block devices, the `dd` runs between marks, the panic screens, then
/// the storm modules.
fn script() -> String {
    let mut s = String::from(
        r#"mount -t configfs none /sys/kernel/config
insmod /modules/null_blk.ko nr_devices=1 queue_mode=2 irqmode=0 bs=4096 gb=1
insmod /modules/rnull_mod.ko
r=/sys/kernel/config/rnull/rnullb0
mkdir $r && echo 4096 > $r/blocksize && echo 0 > $r/irqmode && echo 1024 > $r/size && echo 1 > $r/power
mark() { echo "runtime: mark $*" > /dev/kmsg; }
io() {
    mark "$1-$2 $3 begin"
    if [ "$2" = read ]; then
        dd if=/dev/$1 of=/dev/null bs=4096 count=$3 iflag=direct 2>/dev/null
    else
        dd if=/dev/zero of=/dev/$1 bs=4096 count=$3 oflag=direct 2>/dev/null
    fi
    mark "$1-$2 $3 end"
}
"#,
    );
    for (dev, dir) in IO_CASES {
        for n in [SHORT, LONG] {
            s += &format!("io {dev} {dir} {n}\n");
        }
    }
    // One QR screen with pr_debug() on first: its "QR width" line shows that the encoder made a
    // code (drm_panic falls back to the `user` screen when it cannot), and `parse` requires it.
    s += r#"screen=/sys/module/drm/parameters/panic_screen
plane=$(ls /sys/kernel/debug/dri/*/drm_panic_plane_0 2>/dev/null | head -n 1)
[ -n "$plane" ] || echo "runtime: no drm_panic_plane_0: no display bound to bochs" > /dev/kmsg
echo 'file drm_panic.c +p' > /sys/kernel/debug/dynamic_debug/control
printf qr_code > $screen && echo 1 > $plane
echo 'file drm_panic.c -p' > /sys/kernel/debug/dynamic_debug/control
draw() {
    printf $1 > $screen
    mark "panic-screen-$1 $2 begin"
    i=0
    while [ $i -lt $2 ]; do echo 1 > $plane; i=$((i + 1)); done
    mark "panic-screen-$1 $2 end"
}
"#;
    for screen in SCREENS {
        for n in [DRAWS_SHORT, DRAWS_LONG] {
            s += &format!("draw {screen} {n}\n");
        }
    }
    s += "insmod /extra/storm_rust.ko\ninsmod /extra/storm_c.ko\n";
    s
}

/// Reads the counts of one boot from its `dmesg`: instructions per request for each block case,
/// and per repeat for each storm case.
fn parse(dmesg: &str) -> Result<BTreeMap<String, f64>> {
    let mut marks: BTreeMap<(String, u64, String), u64> = BTreeMap::new();
    let mut counts = BTreeMap::new();
    for line in dmesg.lines() {
        if let Some((time, rest)) = timestamped(line) {
            if let Some(mark) = rest.strip_prefix("runtime: mark ") {
                let parts: Vec<&str> = mark.split_whitespace().collect();
                if let [case, n, edge] = parts[..] {
                    marks.insert((case.into(), n.parse()?, edge.into()), time);
                }
            }
        }
        if let Some((_, storm)) = line.split_once("storm: ") {
            let parts: Vec<&str> = storm.split_whitespace().collect();
            if let [case, repeats, ns] = parts[..] {
                let repeats: f64 = repeats.parse()?;
                let ns: f64 = ns.parse()?;
                counts.insert(format!("storm {case}"), ns / repeats);
            }
        }
    }
    // The time of one operation: the difference of the runs of `long` and `short` operations
    // between the marks of `case`, divided by the difference of their lengths.
    let per_operation = |case: &str, short: u64, long: u64| -> Result<f64> {
        let took = |n: u64| -> Result<u64> {
            let at = |edge: &str| {
                marks
                    .get(&(case.to_string(), n, edge.to_string()))
                    .copied()
                    .with_context(|| format!("no `runtime: mark {case} {n} {edge}` in dmesg"))
            };
            Ok(at("end")?.saturating_sub(at("begin")?))
        };
        Ok((took(long)? as f64 - took(short)? as f64) / (long - short) as f64)
    };
    for (dev, dir) in IO_CASES {
        let per_request = per_operation(&format!("{dev}-{dir}"), SHORT, LONG)?;
        counts.insert(format!("{dev} 4 KiB {dir}"), per_request);
    }
    if dmesg.contains("runtime: no drm_panic_plane_0") {
        bail!("the guest found no drm_panic_plane_0 in /sys/kernel/debug/dri: no DRM driver bound QEMU's bochs display (CONFIG_DRM_BOCHS, the -vga/-device argument)");
    }
    if !dmesg.contains("QR width") {
        bail!("the drm_panic QR screen printed no `QR width` line: the Rust encoder made no code, and drm_panic drew the `user` screen instead");
    }
    for screen in SCREENS {
        let per_draw = per_operation(&format!("panic-screen-{screen}"), DRAWS_SHORT, DRAWS_LONG)?;
        counts.insert(format!("drm_panic {screen} screen, one draw"), per_draw);
    }
    if !counts.keys().any(|k| k.starts_with("storm ")) {
        bail!("no `storm:` lines in dmesg: the storm modules did not load");
    }
    Ok(counts)
}

/// Splits `[   12.345678] text` into the time in nanoseconds and the text.
fn timestamped(line: &str) -> Option<(u64, &str)> {
    let rest = line.trim_start().strip_prefix('[')?;
    let (time, text) = rest.split_once(']')?;
    let (secs, micros) = time.trim().split_once('.')?;
    let ns = secs.parse::<u64>().ok()? * 1_000_000_000 + micros.parse::<u64>().ok()? * 1_000;
    Some((ns, text.trim_start()))
}

/// The table of one architecture: instructions per operation in each mode (the mean of the
/// boots), report/panic, and how far the boots are apart.
pub fn markdown(arch: Arch, results: &Results) -> String {
    let mut w = format!(
        "\n### Kernel run time, {arch}: instructions per operation (QEMU `-icount shift=0,sleep=off`, one vCPU)\n\n\
         | case | off | panic | report | report/panic |\n|---|---|---|---|---|\n"
    );
    for (case, modes) in &results.counts {
        let mean = |mode: Mode| {
            modes
                .get(&mode.to_string())
                .filter(|runs| !runs.is_empty())
                .map(|runs| runs.iter().sum::<f64>() / runs.len() as f64)
        };
        let cell = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.1}"));
        let ratio = match (mean(Mode::Report), mean(Mode::Panic)) {
            (Some(r), Some(p)) if p > 0.0 => format!("{:.3}", r / p),
            _ => "—".into(),
        };
        w += &format!(
            "| {case} | {} | {} | {} | {ratio} |\n",
            cell(mean(Mode::Off)),
            cell(mean(Mode::Panic)),
            cell(mean(Mode::Report)),
        );
    }
    w += &format!(
        "\nEach kernel booted {RUNS} times; the boots differ by at most {:.3}%. A block request is \
         the difference of {LONG} and {SHORT} `dd` requests divided by {}; a panic screen the \
         difference of {DRAWS_LONG} and {DRAWS_SHORT} draws divided by {} (`qr_code` encodes the \
         log with the Rust QR encoder, `user` draws the same screen without it); a storm case is its \
         loop's time over its repeats, loop included (`u32-add` is the same loop without the \
         overflow). Panic mode has no overflow storm: its first overflow stops the machine.\n",
        results.worst_disagreement() * 100.0,
        LONG - SHORT,
        DRAWS_LONG - DRAWS_SHORT,
    );
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[seconds.micros]` for `ns`.
    fn stamp(ns: u64) -> String {
        format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
    }

    /// The panic screens' marks, with `user` draws of 3 ms and `qr_code` draws of 5 ms, and the
    /// encoder's "QR width" line.
    fn screens() -> String {
        let mut dmesg =
            "[    0.500000] [drm:draw_panic_plane] QR width 101 and scale 4\n".to_string();
        for (i, (screen, ms)) in [("user", 3u64), ("qr_code", 5)].iter().enumerate() {
            let base = 500_000_000 * (i as u64 + 1);
            for n in [DRAWS_SHORT, DRAWS_LONG] {
                dmesg += &format!(
                    "[{:>12}] runtime: mark panic-screen-{screen} {n} begin\n",
                    stamp(base)
                );
                let end = stamp(base + 1_000_000 + n * ms * 1_000_000);
                dmesg += &format!("[{end:>12}] runtime: mark panic-screen-{screen} {n} end\n");
            }
        }
        dmesg
    }

    #[test]
    fn parse_reads_marks_and_storms() {
        let mut dmesg = screens();
        for (i, (dev, dir)) in IO_CASES.iter().enumerate() {
            let base = 10_000_000 * (i as u64 + 1);
            for (n, took) in [(SHORT, 300_000u64), (LONG, 1_120_000)] {
                dmesg += &format!(
                    "[{:>12}] runtime: mark {dev}-{dir} {n} begin\n",
                    stamp(base)
                );
                dmesg += &format!(
                    "[{:>12}] runtime: mark {dev}-{dir} {n} end\n",
                    stamp(base + took)
                );
            }
        }
        dmesg += "[    1.000000] storm_rust: storm: u32-add-overflow-repeat 20000 700000000\n";
        let counts = parse(&dmesg).unwrap();
        // (1,120 us - 300 us) / 8192 requests = 100.1 ns.
        let read = counts["nullb0 4 KiB read"];
        assert!((read - 820_000.0 / 8192.0).abs() < 1e-9, "{read}");
        assert_eq!(counts["storm u32-add-overflow-repeat"], 35_000.0);
        assert_eq!(counts["drm_panic user screen, one draw"], 3_000_000.0);
        assert_eq!(counts["drm_panic qr_code screen, one draw"], 5_000_000.0);
    }

    #[test]
    fn parse_fails_without_a_qr_code() {
        let mut dmesg = include_str!("../fixtures/runtime-dmesg-x86_64-panic.txt").to_string();
        dmesg += &screens().replace("QR width", "panic screen");
        let err = parse(&dmesg).unwrap_err();
        assert!(format!("{err:#}").contains("no `QR width` line"), "{err:#}");
    }

    /// A real boot's log (x86_64, panic mode), cut to the lines `parse` reads and the WARN.
    #[test]
    fn parse_reads_a_real_boot() {
        // The fixture predates the panic screens: their marks are synthetic.
        let dmesg =
            include_str!("../fixtures/runtime-dmesg-x86_64-panic.txt").to_string() + &screens();
        let counts = parse(&dmesg).unwrap();
        // 10,240 reads took 35,716 us and 2,048 took 7,509 us: 28,207 us for 8,192 reads.
        let read = counts["nullb0 4 KiB read"];
        assert!((read - 28_207_000.0 / 8192.0).abs() < 1e-6, "{read}");
        assert_eq!(
            counts["storm c-warn-on-once-repeat"],
            587_178_161.0 / 20_000.0
        );
        // Panic mode prints no overflow storm.
        assert!(!counts.contains_key("storm u32-add-overflow-repeat"));
        assert_eq!(counts.len(), 4 + 4 + 2);
    }

    #[test]
    fn parse_fails_without_marks() {
        let err = parse("[    1.000000] storm_rust: storm: u32-add 20000 260000\n").unwrap_err();
        assert!(format!("{err:#}").contains("runtime: mark nullb0-read"));
    }

    #[test]
    fn disagreement_is_relative_to_the_smaller_run() {
        let mut results = Results::default();
        results
            .counts
            .entry("c".into())
            .or_default()
            .insert("report".into(), vec![1000.0, 1001.0]);
        assert!((results.worst_disagreement() - 0.001).abs() < 1e-12);
    }
}
