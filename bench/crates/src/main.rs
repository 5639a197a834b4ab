//! `crates-bench <workload>`: runs one workload of the library and prints `<workload> <checksum>`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let name = std::env::args().nth(1).unwrap_or_default();
    match overflow_bench_crates::run(&name) {
        Some(checksum) => {
            println!("{name} {checksum}");
            ExitCode::SUCCESS
        }
        None => {
            eprintln!(
                "usage: crates-bench <workload>, with one of: {}",
                overflow_bench_crates::WORKLOADS.join(" ")
            );
            ExitCode::FAILURE
        }
    }
}
