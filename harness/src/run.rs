//! Running external tools: print the command, log everything to a file, show progress, time out.

use std::fs::{self, File, OpenOptions};
use std::io::{IsTerminal, Read, Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// Renders a command the way a shell user would type it.
pub fn display(cmd: &Command) -> String {
    let mut parts = Vec::new();
    for (key, value) in cmd.get_envs() {
        if let Some(value) = value {
            parts.push(format!(
                "{}={}",
                key.to_string_lossy(),
                quote(&value.to_string_lossy())
            ));
        }
    }
    parts.push(quote(&cmd.get_program().to_string_lossy()));
    parts.extend(cmd.get_args().map(|a| quote(&a.to_string_lossy())));
    parts.join(" ")
}

fn quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Formats a duration as `1m23s` or `45s`.
pub fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}.{}s", s, d.subsec_millis() / 100)
    }
}

/// The last non-empty lines of a log file, for error messages and progress.
pub fn tail(path: &Path, lines: usize) -> String {
    let Ok(mut file) = File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(64 * 1024);
    let mut buf = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err() || file.read_to_end(&mut buf).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&buf);
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Runs `cmd` to completion with its output appended to `log`, showing progress.
///
/// Fails if the command cannot start, exits non-zero or runs longer than `timeout`; the error
/// shows the end of the log and its path.
pub fn run_logged(mut cmd: Command, label: &str, log: &Path, timeout: Duration) -> Result<()> {
    let status = spawn_logged(&mut cmd, label, log, timeout)?;
    if !status.success() {
        bail!(
            "{label} failed ({status}).\nLast lines of the log:\n{}\nFull log: {}",
            indent(&tail(log, 25)),
            log.display()
        );
    }
    Ok(())
}

/// Like [`run_logged`], but returns the exit status instead of failing on a non-zero one.
pub fn spawn_logged(
    cmd: &mut Command,
    label: &str,
    log: &Path,
    timeout: Duration,
) -> Result<ExitStatus> {
    if let Some(dir) = log.parent() {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let shown = display(cmd);
    eprintln!("$ {shown}");
    eprintln!("  log: {}", log.display());
    let mut out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("opening log {}", log.display()))?;
    writeln!(out, "$ {shown}")?;
    let err = out.try_clone()?;
    let start = Instant::now();
    let mut child = spawn_group(cmd, out, err).with_context(|| format!("{label}: {shown}"))?;

    let tty = std::io::stderr().is_terminal();
    let mut last_report = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            if tty {
                eprint!("\r\x1b[K");
            }
            eprintln!(
                "  {label}: {} in {}",
                if status.success() { "done" } else { "FAILED" },
                fmt_duration(start.elapsed())
            );
            return Ok(status);
        }
        if start.elapsed() > timeout {
            // SAFETY: `kill` has no memory-safety preconditions; the negative pid names the
            // process group created by `process_group(0)` above.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            if tty {
                eprint!("\r\x1b[K");
            }
            bail!(
                "{label} timed out after {} and was killed.\nLast lines of the log:\n{}\nFull log: {}",
                fmt_duration(timeout),
                indent(&tail(log, 25)),
                log.display()
            );
        }
        let every = if tty {
            Duration::from_secs(1)
        } else {
            Duration::from_secs(60)
        };
        if last_report.elapsed() >= every {
            last_report = Instant::now();
            let last = tail(log, 1);
            let last: String = last.chars().take(90).collect();
            if tty {
                eprint!(
                    "\r\x1b[K  {label} {}: {last}",
                    fmt_duration(start.elapsed())
                );
            } else {
                eprintln!("  {label} {}: {last}", fmt_duration(start.elapsed()));
            }
        }
        thread::sleep(Duration::from_millis(200));
    }
}

/// Starts `cmd` in its own process group (so a timeout can kill all of it) with no input.
fn spawn_group(cmd: &mut Command, out: File, err: File) -> Result<std::process::Child> {
    cmd.stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .with_context(|| {
            format!(
                "cannot start `{}`; is it installed? (try `setup`)",
                display(cmd)
            )
        })
}

/// Runs a short command and returns its standard output.
pub fn capture(mut cmd: Command, timeout: Duration) -> Result<String> {
    let shown = display(&cmd);
    let dir = std::env::temp_dir();
    let out_path = dir.join(format!("overflow-harness-{}-out", std::process::id()));
    let err_path = dir.join(format!("overflow-harness-{}-err", std::process::id()));
    let out = File::create(&out_path)?;
    let err = File::create(&err_path)?;
    let mut child = spawn_group(&mut cmd, out, err)?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() > timeout {
            // SAFETY: see `spawn_logged`.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            bail!("`{shown}` timed out after {}", fmt_duration(timeout));
        }
        thread::sleep(Duration::from_millis(20));
    };
    let stdout = fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = fs::read_to_string(&err_path).unwrap_or_default();
    let _ = fs::remove_file(&out_path);
    let _ = fs::remove_file(&err_path);
    if !status.success() {
        bail!(
            "`{shown}` failed ({status}):\n{}",
            indent(stderr.trim_end())
        );
    }
    Ok(stdout)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// An exclusive lock on a file, held until dropped: one heavy build at a time on this machine.
pub struct Lock(#[allow(dead_code)] File);

impl Lock {
    pub fn acquire(path: &Path) -> Result<Lock> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .with_context(|| format!("opening lock file {}", path.display()))?;
        use std::os::fd::AsRawFd;
        // SAFETY: `flock` on a valid open file descriptor has no memory-safety preconditions.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            eprintln!("waiting for another build to release {}", path.display());
            // SAFETY: as above.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
                bail!(
                    "cannot lock {}: {}",
                    path.display(),
                    std::io::Error::last_os_error()
                );
            }
        }
        Ok(Lock(file))
    }
}

/// Writes `contents` to `path` only if it differs, so that unchanged inputs keep their mtime.
pub fn write_if_changed(path: &Path, contents: &[u8]) -> Result<bool> {
    if fs::read(path).ok().as_deref() == Some(contents) {
        return Ok(false);
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    fs::write(path, contents).with_context(|| format!("writing {}", path.display()))?;
    Ok(true)
}

/// Sums the `test result: ... N passed; M failed; ...` lines that libtest (and compiletest)
/// print.
pub fn libtest_counts(output: &str) -> (usize, usize) {
    let (mut passed, mut failed) = (0, 0);
    for line in output
        .lines()
        .filter_map(|l| l.strip_prefix("test result: "))
    {
        let count = |word: &str| {
            line.split(';')
                .find_map(|p| {
                    p.trim()
                        .strip_suffix(word)?
                        .trim()
                        .rsplit(' ')
                        .next()?
                        .parse()
                        .ok()
                })
                .unwrap_or(0)
        };
        passed += count("passed");
        failed += count("failed");
    }
    (passed, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_counts_sums_result_lines() {
        let out = "test result: ok. 6 passed; 0 failed; 2 ignored; 0 measured\n\
                   test result: FAILED. 3 passed; 1 failed; 0 ignored\nother line\n";
        assert_eq!(libtest_counts(out), (9, 1));
    }

    #[test]
    fn quote_only_quotes_what_needs_it() {
        assert_eq!(quote("O=/tmp/x"), "O=/tmp/x");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
