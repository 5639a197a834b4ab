//! Extracting WARN reports and panics from a kernel console log.

use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

/// One `WARNING:` report, from its header to its end-of-trace marker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WarnReport {
    pub file: String,
    pub line: u32,
    /// The column, from a `file:line:column` in the report (overflow reports print one).
    pub column: Option<u32>,
    /// The overflow message (`attempt to add with overflow: 200_u8 + 100_u8`, ...), if the
    /// report has one.
    pub message: Option<String>,
    /// The function the WARN points at, as `__warn()` prints it.
    pub caller: Option<String>,
    pub cpu: Option<u32>,
    /// Whether a `cut here` line came right before the header.
    pub cut_here: bool,
    /// Whether the `---[ end trace ... ]---` marker closed the report.
    pub complete: bool,
    /// The report's lines as printed, from `cut here` to the end-of-trace marker.
    pub text: Vec<String>,
}

/// What a console log says about WARNs and panics.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Console {
    pub warns: Vec<WarnReport>,
    /// The reason of a `Kernel panic - not syncing:` line.
    pub panic: Option<String>,
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("valid regex"))
}

/// Removes the `[    1.234567]` timestamp (and a `[    T1]` caller id) printk puts in front.
fn strip_prefix(line: &str) -> &str {
    static PREFIX: OnceLock<Regex> = OnceLock::new();
    let prefix = re(&PREFIX, r"^(?:\[\s*\d+\.\d+\]\s?)?(?:\[\s*[TC]\d+\]\s?)?");
    let line = line.trim_end_matches('\r');
    &line[prefix.find(line).map_or(0, |m| m.end())..]
}

/// Parses every WARN report and the panic reason out of a console log.
pub fn parse(log: &str) -> Console {
    static NEW: OnceLock<Regex> = OnceLock::new();
    static OLD: OnceLock<Regex> = OnceLock::new();
    static MESSAGE: OnceLock<Regex> = OnceLock::new();
    // Linux 7.2: `WARNING: lib/foo.c:12 at func+0x1/0x2, CPU#0: swapper/0`.
    let new = re(&NEW, r"^WARNING: (\S+):(\d+) at ([^,]+), CPU#(\d+)");
    // Before: `WARNING: CPU: 0 PID: 1 at lib/foo.c:12 func+0x1/0x2`.
    let old = re(&OLD, r"^WARNING: CPU: (\d+) PID: \d+ at (\S+):(\d+) (\S+)");
    // The overflow handler's message, with the operands (`attempt to add with overflow:
    // 200_u8 + 100_u8`) when the line goes on with ` at file:line:column`.
    let message = re(
        &MESSAGE,
        r"(attempt to [a-z ]+ with overflow(?:: .*?)?)(?: at \S+:\d+:\d+|$)",
    );

    let mut console = Console::default();
    let mut current: Option<WarnReport> = None;
    let mut prev = "";
    // Lines between `cut here` and the header: `WARN()` prints its message there on architectures
    // with `__WARN_FLAGS`; `warn_at()` prints it after the header.
    let mut preamble: Vec<&str> = Vec::new();
    let mut cut = "";
    for raw in log.lines() {
        let line = strip_prefix(raw);
        let header = new
            .captures(line)
            .map(|c| {
                (
                    c[1].to_string(),
                    c[2].parse().ok(),
                    c[3].to_string(),
                    c[4].parse().ok(),
                )
            })
            .or_else(|| {
                old.captures(line).map(|c| {
                    (
                        c[2].to_string(),
                        c[3].parse().ok(),
                        c[4].to_string(),
                        c[1].parse().ok(),
                    )
                })
            });
        if line.contains("[ cut here ]") {
            preamble.clear();
            cut = line;
        }
        if let Some((file, Some(line_no), caller, cpu)) = header {
            console.warns.extend(current.take());
            let mut report = WarnReport {
                file,
                line: line_no,
                column: None,
                message: None,
                caller: Some(caller.trim().to_string()),
                cpu,
                cut_here: prev.contains("[ cut here ]") || !preamble.is_empty(),
                complete: false,
                text: Vec::new(),
            };
            if report.cut_here {
                report.text.push(cut.to_string());
            }
            for earlier in preamble.drain(..) {
                report.take_details(earlier, message);
                report.text.push(earlier.to_string());
            }
            report.text.push(line.to_string());
            current = Some(report);
        } else if let Some(report) = current.as_mut() {
            report.text.push(line.to_string());
            if line.starts_with("---[ end trace") {
                report.complete = true;
                console.warns.extend(current.take());
            } else {
                report.take_details(line, message);
            }
        } else if prev.contains("[ cut here ]") || !preamble.is_empty() {
            preamble.push(line);
        }
        if let Some(reason) = line.strip_prefix("Kernel panic - not syncing: ") {
            console
                .panic
                .get_or_insert_with(|| reason.trim().to_string());
        }
        prev = line;
    }
    console.warns.extend(current);
    console
}

impl WarnReport {
    /// Picks the overflow message and the site's column out of a line of the report.
    fn take_details(&mut self, line: &str, message: &Regex) {
        if self.message.is_none() {
            self.message = message.captures(line).map(|c| c[1].to_string());
        }
        if self.column.is_none() {
            let site = format!("{}:{}:", self.file, self.line);
            if let Some(pos) = line.find(&site) {
                let digits: String = line[pos + site.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                self.column = digits.parse().ok();
            }
        }
    }

    pub fn site(&self) -> String {
        match self.column {
            Some(col) => format!("{}:{}:{col}", self.file, self.line),
            None => format!("{}:{}", self.file, self.line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_new_style_header_with_column_and_message() {
        let log = "\
[    1.000000] ------------[ cut here ]------------
[    1.000001] WARNING: samples/rust/rust_overflow_report.rs:25 at init+0x2c/0x60 [rust_overflow_report], CPU#1: insmod/60
[    1.000002] rust: attempt to add with overflow at samples/rust/rust_overflow_report.rs:25:17
[    1.000003] Modules linked in: rust_overflow_report(+)
[    1.000004] ---[ end trace 0000000000000000 ]---
";
        let console = parse(log);
        assert_eq!(console.panic, None);
        assert_eq!(console.warns.len(), 1);
        let w = &console.warns[0];
        assert_eq!(w.site(), "samples/rust/rust_overflow_report.rs:25:17");
        assert_eq!(w.message.as_deref(), Some("attempt to add with overflow"));
        assert_eq!(w.cpu, Some(1));
        assert!(w.cut_here && w.complete);
        assert_eq!(
            w.caller.as_deref(),
            Some("init+0x2c/0x60 [rust_overflow_report]")
        );
    }

    #[test]
    fn parses_message_with_operands_after_the_header() {
        let log = "\
[    1.000000] ------------[ cut here ]------------
[    1.000001] WARNING: samples/rust/rust_overflow_report.rs:49 at report+0x9d/0x1e0, CPU#0: insmod/60
[    1.000002] rust: attempt to add with overflow: 200_u8 + 100_u8 at samples/rust/rust_overflow_report.rs:49:19
[    1.000003] Modules linked in: rust_overflow_report(+)
[    1.000004] ---[ end trace 0000000000000000 ]---
";
        let w = &parse(log).warns[0];
        assert_eq!(w.site(), "samples/rust/rust_overflow_report.rs:49:19");
        assert_eq!(
            w.message.as_deref(),
            Some("attempt to add with overflow: 200_u8 + 100_u8")
        );
        assert!(w.cut_here && w.complete);
    }

    #[test]
    fn parses_negation_message() {
        let log = "\
WARNING: a.rs:3 at f+0x1/0x2, CPU#0: x/1
rust: attempt to negate with overflow: -(-128_i8) at a.rs:3:5
---[ end trace 0000000000000000 ]---
";
        let w = &parse(log).warns[0];
        assert_eq!(
            w.message.as_deref(),
            Some("attempt to negate with overflow: -(-128_i8)")
        );
        assert_eq!(w.column, Some(5));
    }

    /// dmesg from a boot of the x86_64 demo kernel, as `boot` captured it.
    #[test]
    fn parses_a_real_overflow_report() {
        let console = parse(include_str!("../fixtures/dmesg-x86_64-report.txt"));
        assert_eq!(console.panic, None);
        assert_eq!(console.warns.len(), 1);
        let w = &console.warns[0];
        assert_eq!(w.site(), "samples/rust/rust_overflow_report.rs:49:19");
        assert_eq!(w.message.as_deref(), Some("attempt to add with overflow"));
        assert!(w.cut_here && w.complete);
        assert_eq!(w.cpu, Some(1));
        assert!(w
            .caller
            .as_deref()
            .unwrap()
            .ends_with("[rust_overflow_report]"));
        assert!(w.text[0].contains("[ cut here ]"));
        assert!(w.text[1].starts_with("rust: attempt to add with overflow at "));
        assert!(w.text[2].starts_with("WARNING: samples/rust/rust_overflow_report.rs:49 at "));
        assert!(w.text.last().unwrap().starts_with("---[ end trace"));
        assert!(w.text.iter().any(|l| l.contains("report_integer_overflow")));
    }

    #[test]
    fn parses_old_style_header_and_panic() {
        let log = "\
WARNING: CPU: 0 PID: 1 at lib/foo.c:12 foo+0x1/0x2
---[ end trace 0000000000000000 ]---
Kernel panic - not syncing: panic_on_warn set ...
";
        let console = parse(log);
        assert_eq!(console.warns.len(), 1);
        assert_eq!(console.warns[0].site(), "lib/foo.c:12");
        assert!(!console.warns[0].cut_here);
        assert_eq!(console.panic.as_deref(), Some("panic_on_warn set ..."));
    }
}
