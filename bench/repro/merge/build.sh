#!/bin/sh
# build.sh SRC OUT CONFIG OPT PANIC   CONFIG = off|on|report|a|b|c|d|e|f ; PANIC = unwind|abort
# extra rustc args via $EXTRA
set -e
R=/var/tmp/overflow-harness/toolchains/e1e815936e5aee57/bin/rustc
D=/tmp/merge-proto
SRC=$1; OUT=$2; CFG=$3; OPT=$4; PANIC=$5
case $CFG in
  off) F="-Coverflow-checks=off";;
  on) F="-Coverflow-checks=on";;
  report) F="-Coverflow-checks=report";;
  a|b|c|d|e|f) F="-Coverflow-checks=report -Zllvm-plugins=$D/merge.so"; export MERGE_VARIANT=$CFG;;
esac
RUSTC_BOOTSTRAP=1 $R --edition 2024 -Copt-level=$OPT -Cpanic=$PANIC $F $EXTRA -o $OUT $SRC
