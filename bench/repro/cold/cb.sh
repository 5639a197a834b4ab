#!/bin/sh
# cb.sh CONFIG OPT : build bench/crates and count callgrind instructions per workload
set -e
C=$1; O=$2; TC=/var/tmp/overflow-harness/toolchain-current
case $C in
  off) F="-Coverflow-checks=off";; on) F="-Coverflow-checks=on";;
  report) F="-Coverflow-checks=report";;
  cold) F="-Coverflow-checks=report -Zllvm-plugins=${PLUGIN:-/tmp/cold/cold.so}";;
esac
T=${OUT:-/tmp/cold/cb}/t-$C-$O
cd /work/main/bench/crates
RUSTC=$TC/bin/rustc RUSTC_BOOTSTRAP=1 RUSTFLAGS="$F" cargo build -q --release --locked --target x86_64-unknown-linux-gnu --target-dir $T --config profile.release.opt-level=$O
EXE=$T/x86_64-unknown-linux-gnu/release/crates-bench
for w in adler2 atoi base64-decode base64-encode core-sum crc32fast fnv fxhash hashbrown itoa miniz-deflate miniz-inflate ryu; do
  r=overflow_bench_crates::$(echo $w | tr - _)
  valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect=$r --log-file=${OUT:-/tmp/cold/cb}/$C-$O-$w.log $EXE $w > ${OUT:-/tmp/cold/cb}/$C-$O-$w.out
  n=$(grep Collected ${OUT:-/tmp/cold/cb}/$C-$O-$w.log | awk '{print $4}')
  echo "$C O$O $w $n $(cat ${OUT:-/tmp/cold/cb}/$C-$O-$w.out)"
done
