#!/bin/sh
# measure_patch8.sh [TOOLCHAIN]: x86_64 instructions (callgrind) of the element-wise and accumulator
# loops with rustc patch 8 (merged loop reports), off / on / report / merged (report with
# -Zmerge-overflow-reports), -Copt-level=2.
# bench/workloads.rs `blend` (whole program) and this directory's bench.rs workloads (Ir inside w_*).
set -e
T=${1:-/var/tmp/overflow-harness/toolchain-current}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(mktemp -d)
MODES="off on report merged"
flags() {
  case $1 in
    merged) echo "-Coverflow-checks=report -Zmerge-overflow-reports" ;;
    *) echo "-Coverflow-checks=$1" ;;
  esac
}
for c in $MODES; do
  # shellcheck disable=SC2046 # flags() prints several words on purpose
  RUSTC_BOOTSTRAP=1 "$T/bin/rustc" --edition 2024 -Copt-level=2 $(flags $c) \
    -o "$OUT/workloads-$c" "$HERE/../../workloads.rs"
  # shellcheck disable=SC2046
  RUSTC_BOOTSTRAP=1 "$T/bin/rustc" --edition 2024 -Copt-level=2 -Cpanic=abort $(flags $c) \
    -o "$OUT/bench-$c" "$HERE/bench.rs"
done
ir() { grep '^summary:' "$1" | awk '{print $2}'; }
line=blend
for c in $MODES; do
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cg" "$OUT/workloads-$c" blend >"$OUT/stdout" 2>"$OUT/err"
  line="$line $c=$(ir "$OUT/cg")"
done
echo "$line"
for w in sum_u32 sum_u64 adler hist dot map_add map_mul; do
  line=$w
  for c in $MODES; do
    valgrind --tool=callgrind --toggle-collect='w_*' --callgrind-out-file="$OUT/cg" "$OUT/bench-$c" $w >"$OUT/stdout" 2>"$OUT/err"
    line="$line $c=$(ir "$OUT/cg")"
  done
  echo "$line"
done
rm -rf "$OUT"
