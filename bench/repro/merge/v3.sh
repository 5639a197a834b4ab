#!/bin/sh
# v3.sh: -Ctarget-cpu=x86-64-v3, O3, panic=abort: callgrind Ir in w_* and whether a vector.body exists
# binaries: EXTRA="-Ctarget-cpu=x86-64-v3 --emit=llvm-ir,link" ./build.sh bench.rs bin/benchv3_$c $c 3 abort
cd /tmp/merge-proto; mkdir -p cg
for w in sum_u32 adler hist dot map_add map_mul; do
  printf "%-8s" $w
  for c in ${CONFIGS:-off report a c d e f}; do
    valgrind --tool=callgrind --toggle-collect='w_*' --callgrind-out-file=cg/v3_${w}_$c.out bin/benchv3_$c $w > cg/v3_${w}_$c.stdout 2>/dev/null
    ir=$(grep "^summary:" cg/v3_${w}_$c.out | awk '{print $2}')
    if awk "/^define.*@w_$w\\(/,/^}/" bin/benchv3_$c.ll | grep -q vector.body; then v=V; else v=-; fi
    printf " %s=%s%s" $c $ir $v
  done; echo
done
