//! The warnings of a kernel build log, normalised so that builds in different directories and
//! modes compare line by line.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;

/// One warning per element, normalised, sorted (repeated warnings are kept, once per time
/// they were printed):
///
/// - rustc and clippy (`warning: message` with a `--> file:line:column` below it) become
///   `file:line:column: warning: message`;
/// - compiler, objtool, linker, Kconfig and modpost lines (`...: warning: ...`,
///   `WARNING: modpost: ...`) are kept whole;
/// - the source and build directories are removed from paths, and objtool's `func+0x12/0x40`
///   offsets become `func+0x?`, since report mode moves code;
/// - summaries (`warning: 3 warnings emitted`) and quoted source lines are dropped.
pub fn collect(log: &str, dirs: &[&str]) -> Vec<String> {
    static SUMMARY: OnceLock<Regex> = OnceLock::new();
    static SNIPPET: OnceLock<Regex> = OnceLock::new();
    let summary = SUMMARY.get_or_init(|| {
        Regex::new(r"^warning: (\d+ warnings? emitted|.* generated \d+ warnings?)").unwrap()
    });
    // `12 |     code`, `   |`, `   = note:`, `...`: the lines rustc quotes under a diagnostic.
    let snippet = SNIPPET.get_or_init(|| Regex::new(r"^\s*(\d+\s*)?(\||=|\.\.\.)").unwrap());

    let mut found = Vec::new();
    // A rustc-style `warning:` header waiting for its `-->` location.
    let mut pending: Option<String> = None;
    for raw in log.lines() {
        let line = raw.trim_end_matches('\r');
        if let Some(message) = &pending {
            if let Some(location) = line.trim_start().strip_prefix("--> ") {
                found.push(format!("{}: warning: {message}", location.trim()));
                pending = None;
                continue;
            }
            if !line.starts_with(char::is_whitespace) || line.trim().is_empty() {
                // No location (Kconfig, or a message without a span).
                found.push(format!("warning: {message}"));
                pending = None;
            }
        }
        if let Some(message) = line.strip_prefix("warning: ") {
            if !summary.is_match(line) {
                pending = Some(message.trim().to_string());
            }
            continue;
        }
        if snippet.is_match(line) || line.starts_with("$ ") {
            continue;
        }
        let lower = line.to_ascii_lowercase();
        if lower.contains(": warning:")
            || lower.contains(":warning:")
            || line.starts_with("WARNING:")
        {
            found.push(line.trim().to_string());
        }
    }
    if let Some(message) = pending {
        found.push(format!("warning: {message}"));
    }

    let mut found: Vec<String> = found.iter().map(|w| normalise(w, dirs)).collect();
    found.sort();
    found
}

/// Removes the build and source directories and objtool's code offsets from a warning.
pub fn normalise(warning: &str, dirs: &[&str]) -> String {
    static OFFSET: OnceLock<Regex> = OnceLock::new();
    let offset = OFFSET.get_or_init(|| Regex::new(r"\+0x[0-9a-f]+(/0x[0-9a-f]+)?").unwrap());
    let mut w = warning.to_string();
    for dir in dirs.iter().filter(|d| !d.is_empty()) {
        let dir = dir.trim_end_matches('/');
        w = w.replace(&format!("{dir}/"), "").replace(dir, "<dir>");
    }
    offset.replace_all(&w, "+0x?").into_owned()
}

/// The warnings of `new` that `base` does not have (counting repeats: a warning printed twice
/// in `new` and once in `base` is new once).
pub fn new_in(base: &[String], new: &[String]) -> Vec<String> {
    let mut counts: BTreeMap<&str, isize> = BTreeMap::new();
    for w in base {
        *counts.entry(w).or_default() += 1;
    }
    let mut out = Vec::new();
    for w in new {
        let c = counts.entry(w).or_default();
        if *c > 0 {
            *c -= 1;
        } else {
            out.push(w.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "/var/tmp/h/linux/src";
    const OUT: &str = "/var/tmp/h/build/x86_64-report-drivers";

    #[test]
    fn rust_and_clippy_warnings_take_their_location() {
        let log = "\
  RUSTC [M] samples/rust/rust_minimal.o
warning: unused variable: `x`
  --> /var/tmp/h/linux/src/samples/rust/rust_minimal.rs:10:9
   |
10 |     let x = 1;
   |         ^ help: if this is intentional, prefix it with an underscore: `_x`
   |
   = note: `#[warn(unused_variables)]` on by default

warning: this `if` has identical blocks
  --> /var/tmp/h/build/x86_64-report-drivers/rust/bindings/bindings_generated.rs:3:1
   |
   = help: for further information visit https://rust-lang.github.io/rust-clippy/
warning: 2 warnings emitted

";
        assert_eq!(
            collect(log, &[SRC, OUT]),
            [
                "rust/bindings/bindings_generated.rs:3:1: warning: this `if` has identical blocks",
                "samples/rust/rust_minimal.rs:10:9: warning: unused variable: `x`",
            ]
        );
    }

    #[test]
    fn c_objtool_linker_kconfig_and_modpost_warnings() {
        let log = "\
/var/tmp/h/linux/src/drivers/foo.c:12:3: warning: unused variable 'y' [-Wunused-variable]
   12 |         int y;
      |             ^
1 warning generated.
drivers/gpu/drm/drm_panic_qr.o: warning: objtool: drm_panic_qr_generate+0x1a4/0x7c0: call to foo() leaves .noinstr.text section
ld.lld-22: warning: /var/tmp/h/build/x86_64-report-drivers/vmlinux.a: archive member 'x.o' is neither ET_REL nor LLVM bitcode
WARNING: modpost: vmlinux: section mismatch in reference: foo+0x10 (section: .text) -> bar (section: .init.text)
.config:12:warning: override: reassigning to symbol RUST
warning: unmet direct dependencies detected for FOO
  Depends on [n]: BAR [=n]
$ make -C /var/tmp/h/linux/src O=/var/tmp/h/build/x86_64-report-drivers olddefconfig
";
        assert_eq!(
            collect(log, &[SRC, OUT]),
            [
                ".config:12:warning: override: reassigning to symbol RUST",
                "WARNING: modpost: vmlinux: section mismatch in reference: foo+0x? (section: .text) -> bar (section: .init.text)",
                "drivers/foo.c:12:3: warning: unused variable 'y' [-Wunused-variable]",
                "drivers/gpu/drm/drm_panic_qr.o: warning: objtool: drm_panic_qr_generate+0x?: call to foo() leaves .noinstr.text section",
                "ld.lld-22: warning: vmlinux.a: archive member 'x.o' is neither ET_REL nor LLVM bitcode",
                "warning: unmet direct dependencies detected for FOO",
            ]
        );
    }

    /// The rustc, clippy-driver and clang-22 lines are their real output on this machine (moved
    /// to a kernel work directory); the kbuild, objtool and modpost lines are in the kernel's
    /// format.
    #[test]
    fn a_build_log_fixture() {
        let log = include_str!("../../fixtures/drivers-build-warnings.log");
        let out = "/var/tmp/h/build/x86_64-report-drivers";
        assert_eq!(
            collect(log, &[out, "/var/tmp/h/linux/src"]),
            [
                "WARNING: modpost: vmlinux: section mismatch in reference: foo+0x? (section: .text) -> bar (section: .init.text)",
                "drivers/x/foo.c:3:6: warning: unused variable 'y' [-Wunused-variable]",
                "samples/rust/rust_clippy.rs:2:5: warning: unneeded `return` statement",
                "samples/rust/rust_sample.o: warning: objtool: _RNvCs1a2b3c_11rust_sample1f+0x?: call without frame pointer save/setup",
                "samples/rust/rust_sample.rs:2:9: warning: unused variable: `unused`",
            ]
        );
    }

    #[test]
    fn the_same_warning_from_two_build_directories_compares_equal() {
        let panic = "warning: unused import\n  --> /b/x86_64-panic-drivers/rust/kernel/x.rs:1:5\n";
        let report =
            "warning: unused import\n  --> /b/x86_64-report-drivers/rust/kernel/x.rs:1:5\n";
        let panic = collect(panic, &["/b/x86_64-panic-drivers"]);
        let report = collect(report, &["/b/x86_64-report-drivers"]);
        assert_eq!(panic, report);
        assert!(new_in(&panic, &report).is_empty());
    }

    #[test]
    fn new_warnings_count_repeats() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let panic = s(&["a", "b", "b"]);
        let report = s(&["a", "b", "b", "b", "c"]);
        assert_eq!(new_in(&panic, &report), ["b", "c"]);
        assert!(new_in(&report, &panic).is_empty());
    }
}
