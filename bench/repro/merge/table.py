#!/usr/bin/env python3
# table.py: measure.txt -> table.txt (Ir ratio vs off; off column = absolute Ir)
import collections
cfgs = "off on report a b c d e f".split()
ws = "sum_u32 sum_u64 adler hist dot map_add map_mul".split()
ir = {}
for l in open("/tmp/merge-proto/measure.txt"):
    w, c, o, p, n = l.split()[:5]
    ir[(w, c, o, p)] = int(n)
for p in ["abort", "unwind"]:
    for o in ["O2", "O3"]:
        print(f"-- panic={p} {o}: Ir ratio vs off (off = absolute Ir)")
        print(" " * 8 + "".join(f"{c:>9}" for c in cfgs))
        for w in ws:
            base = ir[(w, "off", o, p)]
            row = f"{w:<8}{base:>9}"
            for c in cfgs[1:]:
                row += f"{ir[(w, c, o, p)] / base:9.2f}" if (w, c, o, p) in ir else f"{'':>9}"
            print(row)
