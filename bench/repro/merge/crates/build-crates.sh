#!/bin/sh
# build-crates.sh CONFIG  (off|on|report|a|b|c|d|e), release (opt-level 3), panic=unwind, -j1
cd /tmp/merge-proto/crates
T=/var/tmp/overflow-harness/toolchains/e1e815936e5aee57/bin
C=$1
case $C in
  off|on|report) F="-Coverflow-checks=$C";;
  *) F="-Coverflow-checks=report -Zllvm-plugins=/tmp/merge-proto/merge.so"; export MERGE_VARIANT=$C;;
esac
RUSTC_BOOTSTRAP=1 RUSTC=$T/rustc RUSTFLAGS="$F" MERGE_DEBUG=1 cargo build --offline --release -j1 \
  --target-dir target-$C 2> build-$C.log && cp target-$C/release/merge-crates bench-$C
