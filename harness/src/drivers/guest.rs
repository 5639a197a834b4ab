//! The guest half of `drivers`: the script's variables, the `PASS`/`FAIL`/`SKIP` lines it
//! prints, and what in `dmesg` fails the boot.

use std::fmt;
use std::sync::OnceLock;

use regex::Regex;
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::modules::LoadPlan;
use crate::ctx::Arch;

/// The prefix of every line the guest script prints for the host.
const MARKER: &str = "drivers-guest: ";
/// The script, after the variables that [`script`] puts in front of it.
const SCRIPT: &str = include_str!("../../assets/drivers-guest.sh");

/// Modules whose init fails with `-EINVAL` on purpose: `find_bit_benchmark_rust` runs its
/// benchmark in init and then refuses to stay loaded, like the C `find_bit_benchmark`.
const EXPECT_EINVAL: &[&str] = &["find_bit_benchmark_rust"];

/// The sha256 of `mib` MiB of zeros, as busybox `sha256sum` prints it.
pub fn zeros_sha256(mib: usize) -> String {
    let block = vec![0u8; 1 << 20];
    let mut hasher = Sha256::new();
    for _ in 0..mib {
        hasher.update(&block);
    }
    crate::setup::hex(&hasher.finalize())
}

/// The guest script with its variables: the modules to load and what rnull must read back.
pub fn script(arch: Arch, plan: &LoadPlan) -> String {
    format!(
        "# Written by `drivers` (harness/src/drivers/guest.rs).\n\
         ARCH='{arch}'\n\
         RUST_MODULES='{}'\n\
         DEP_MODULES='{}'\n\
         EXPECT_EINVAL='{}'\n\
         ZEROS_256M='{}'\n\
         ZEROS_16M='{}'\n\
         {SCRIPT}",
        plan.rust.join(" "),
        plan.dependencies.join(" "),
        EXPECT_EINVAL.join(" "),
        zeros_sha256(256),
        zeros_sha256(16),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pass,
    Fail,
    Skip,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Skip => "SKIP",
        })
    }
}

/// One step of the guest script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub status: Status,
    pub name: String,
    pub detail: String,
}

/// What the guest script printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub steps: Vec<Step>,
    /// Whether the script printed its last line, `drivers-guest: end`.
    pub finished: bool,
}

impl Report {
    pub fn count(&self, status: Status) -> usize {
        self.steps.iter().filter(|s| s.status == status).count()
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum StepError {
    #[error("console line {line}: unknown step status {status:?} (expected PASS, FAIL or SKIP)")]
    UnknownStatus { line: usize, status: String },
    #[error("console line {line}: a {status} line without a step name")]
    NoName { line: usize, status: Status },
}

/// The steps in a console log: `drivers-guest: PASS|FAIL|SKIP <step>[: <detail>]` lines (also
/// after a kernel message that the console printed on the same line), and the end marker.
pub fn parse_steps(console: &str) -> Result<Report, StepError> {
    let mut report = Report::default();
    for (i, raw) in console.lines().enumerate() {
        let Some(at) = raw.find(MARKER) else {
            continue;
        };
        let rest = raw[at + MARKER.len()..].trim_end_matches('\r').trim_end();
        if rest == "end" {
            report.finished = true;
            continue;
        }
        let (word, rest) = rest.split_once(' ').unwrap_or((rest, ""));
        let status = match word {
            "PASS" => Status::Pass,
            "FAIL" => Status::Fail,
            "SKIP" => Status::Skip,
            other => {
                return Err(StepError::UnknownStatus {
                    line: i + 1,
                    status: other.to_string(),
                })
            }
        };
        let (name, detail) = rest.split_once(": ").unwrap_or((rest, ""));
        if name.trim().is_empty() {
            return Err(StepError::NoName {
                line: i + 1,
                status,
            });
        }
        report.steps.push(Step {
            status,
            name: name.trim().to_string(),
            detail: detail.trim().to_string(),
        });
    }
    Ok(report)
}

/// Lines of a kernel log that fail the boot beyond WARN reports (which `warn::parse` finds):
/// oopses, BUGs, faults, panics, UBSAN reports, and anything that mentions an overflow.
pub fn suspicious(dmesg: &str) -> Vec<String> {
    static BAD: OnceLock<Regex> = OnceLock::new();
    let bad = BAD.get_or_init(|| {
        Regex::new(
            r"\bOops\b|\bBUG:|kernel BUG at|Unable to handle kernel|general protection fault|\bUBSAN:|Kernel panic|cut here|WARNING:|(?i:overflow)",
        )
        .unwrap()
    });
    dmesg
        .lines()
        .filter(|l| bad.is_match(l))
        .map(|l| l.trim_end().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_steps_and_the_end_marker() {
        let console = "\
[    3.1] rust_minimal: Rust minimal sample (init)
drivers-guest: PASS load rust_minimal
drivers-guest: FAIL rnull read: sha256 0123 is not the sha256 of 256 MiB of zeros
[    4.2] rnull0: detected capacity change from 0 to 1048576drivers-guest: SKIP usb: no UDC
drivers-guest: PASS drm_panic qr_code: QR width 177 and scale 2\r
drivers-guest: end
";
        let report = parse_steps(console).unwrap();
        assert!(report.finished);
        assert_eq!(
            report.steps,
            [
                Step {
                    status: Status::Pass,
                    name: "load rust_minimal".into(),
                    detail: String::new()
                },
                Step {
                    status: Status::Fail,
                    name: "rnull read".into(),
                    detail: "sha256 0123 is not the sha256 of 256 MiB of zeros".into()
                },
                Step {
                    status: Status::Skip,
                    name: "usb".into(),
                    detail: "no UDC".into()
                },
                Step {
                    status: Status::Pass,
                    name: "drm_panic qr_code".into(),
                    detail: "QR width 177 and scale 2".into()
                },
            ]
        );
        assert_eq!(report.count(Status::Pass), 2);
    }

    #[test]
    fn a_script_that_stopped_early_is_not_finished() {
        let report = parse_steps("drivers-guest: PASS load a\n").unwrap();
        assert!(!report.finished);
    }

    #[test]
    fn malformed_lines_are_typed_errors() {
        assert_eq!(
            parse_steps("x\ndrivers-guest: MAYBE load a\n"),
            Err(StepError::UnknownStatus {
                line: 2,
                status: "MAYBE".into()
            })
        );
        assert_eq!(
            parse_steps("drivers-guest: PASS \n"),
            Err(StepError::NoName {
                line: 1,
                status: Status::Pass
            })
        );
    }

    #[test]
    fn suspicious_kernel_lines() {
        let dmesg = "\
[    1.0] rust_driver_pci 0000:00:04.0: Probe Rust PCI driver sample
[    2.0] BUG: kernel NULL pointer dereference, address: 0000000000000000
[    2.1] Oops: 0002 [#1] SMP NOPTI
[    3.0] rust: attempt to add with overflow: 200_u8 + 100_u8 at x.rs:1:2
[    4.0] UBSAN: shift-out-of-bounds in lib/foo.c:3:4
[    5.0] i2c-stub: Virtual chip at 0x50
";
        assert_eq!(
            suspicious(dmesg),
            [
                "[    2.0] BUG: kernel NULL pointer dereference, address: 0000000000000000",
                "[    2.1] Oops: 0002 [#1] SMP NOPTI",
                "[    3.0] rust: attempt to add with overflow: 200_u8 + 100_u8 at x.rs:1:2",
                "[    4.0] UBSAN: shift-out-of-bounds in lib/foo.c:3:4",
            ]
        );
    }

    #[test]
    fn zeros_hash_matches_sha256sum() {
        // `head -c 1048576 /dev/zero | sha256sum`
        assert_eq!(
            zeros_sha256(1),
            "30e14955ebf1352266dc2ff8067e68104607e750abb9d3b36582b8af909fcb58"
        );
    }

    #[test]
    fn the_script_starts_with_its_variables() {
        let plan = LoadPlan {
            dependencies: vec![],
            rust: vec!["nova-core".into(), "rust_minimal".into()],
        };
        let s = script(Arch::Arm64, &plan);
        assert!(s.starts_with("# Written by `drivers`"));
        assert!(s.contains("\nARCH='arm64'\n"));
        assert!(s.contains("\nRUST_MODULES='nova-core rust_minimal'\n"));
        assert!(s.contains("\nEXPECT_EINVAL='find_bit_benchmark_rust'\n"));
        assert!(s.contains("drivers-guest: end") || s.contains("say end"));
    }
}
