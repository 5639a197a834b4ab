#!/bin/sh
# cgu_relocs.sh TOOLCHAIN_DIR NAME: build bench/crates' crates.io crates with 16 codegen units in
# report mode, into /tmp/cgu16/target-NAME, and count the relocations that refer to the report
# entry points in the crates' objects, by type: R_X86_64_GOTPCREL is a call through the GOT,
# R_X86_64_PLT32 a direct call (the symbol is hidden), R_X86_64_PC32 the entry points' own
# unwind tables. Measures rustc patch 6's hidden declarations in the other codegen units.
set -e
mkdir -p /tmp/cgu16
cp -r "$(dirname "$0")"/../crates/Cargo.toml "$(dirname "$0")"/../crates/Cargo.lock "$(dirname "$0")"/../crates/src /tmp/cgu16/
cd /tmp/cgu16
T=$1; N=$2
RUSTC_BOOTSTRAP=1 RUSTC=$T/bin/rustc RUSTFLAGS="-Coverflow-checks=report" CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
  cargo build --release -j1 --offline --target-dir target-$N > build-$N.log 2>&1
rm -rf obj-$N && mkdir obj-$N
for r in target-$N/release/deps/lib*.rlib; do
  d=obj-$N/$(basename $r .rlib); mkdir -p $d; (cd $d && ar x ../../$r)
done
echo "$N: objects $(ls obj-$N/*/*.o | wc -l)"
llvm-objdump-22 -r obj-$N/*/*.o | grep -E "report_(wrapped_|neg_)?overflow" | awk '{print $2}' | sort | uniq -c
