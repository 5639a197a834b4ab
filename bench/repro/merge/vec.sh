#!/bin/sh
# vec.sh: per workload function, whether the loop vectorizer produced a vector body (VF from <N x iM>)
for p in abort unwind; do for o in 2 3; do
  printf "%-6s O%s %-7s" $p $o ""; echo
  for c in off on report a b c d e f; do
    printf "  %-7s" $c
    for f in w_sum_u32 w_sum_u64 w_adler w_hist w_dot w_map_add w_map_mul w_break w_gather w_call w_collatz; do
      body=$(awk "/^define.*@$f\\(/,/^}/" bin/bench_${c}_O${o}_$p.ll)
      if echo "$body" | grep -q "vector.body"; then
        vf=$(echo "$body" | grep -o "<[0-9]* x i[0-9]*>" | sort | uniq -c | sort -rn | head -1 | awk '{print $2$3$4}')
        printf " %s=V%s" ${f#w_} "$vf"
      else printf " %s=-" ${f#w_}; fi
    done; echo
  done
done; done
