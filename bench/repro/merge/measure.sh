#!/bin/sh
# measure.sh: callgrind Ir inside the workload function (toggle-collect=w_*), one line per run
cd /tmp/merge-proto; mkdir -p cg
for p in abort unwind; do for o in 2 3; do for c in ${CONFIGS:-off on report a b c d e f}; do for w in sum_u32 sum_u64 adler hist dot map_add map_mul; do
  f=cg/${w}_${c}_O${o}_$p
  valgrind --tool=callgrind --toggle-collect='w_*' --callgrind-out-file=$f.out bin/bench_${c}_O${o}_$p $w > $f.stdout 2> $f.err
  ir=$(grep "^summary:" $f.out | awk '{print $2}')
  echo "$w $c O$o $p $ir $(cat $f.stdout)"
done; done; done; done
