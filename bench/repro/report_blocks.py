#!/usr/bin/env python3
"""report_blocks.py OBJECT [CALLEE-REGEX]: the code that calls the report entry points.

For every call from OBJECT to a function whose name matches CALLEE-REGEX (by default the report
entry points of `core::panic::overflow`, not the EII itself), takes its basic block: from the
instruction after the last branch, return or call before it, or from the last branch target,
to the first branch, return or call after it, or up to the next branch target (the report block,
the call and its way back). Prints how many calls there are, the average number of
instructions of their blocks, and how many of those are register-to-register moves. x86_64 and
AArch64 objects, with `llvm-objdump-22 -dr`.
"""
import collections
import re
import subprocess
import sys

obj = sys.argv[1]
callee = re.compile(sys.argv[2] if len(sys.argv) > 2 else r"8overflow\d+report_(?!integer)")
CALLS = ("bl", "blr", "call", "callq")


def ends_block(mnemonic):
    """Branches, returns and calls (a block of ours ends at a call other than the report's)."""
    return mnemonic in CALLS + ("<function>", "b", "br", "ret", "retq", "brk", "ud2", "cbz",
                                "cbnz", "tbz", "tbnz") or \
        mnemonic.startswith(("b.", "j"))


lines = subprocess.run(["llvm-objdump-22", "-dr", "--no-show-raw-insn", obj],
                       capture_output=True, text=True, check=True).stdout.splitlines()
section, names, insns = None, {}, []  # insns: [mnemonic, operands, relocation target, address]
targets = set()  # (section, address) of every branch target
for line in lines:
    if m := re.match(r"Disassembly of section (\S+):", line):
        section = m.group(1)
    elif m := re.match(r"^([0-9a-f]+) <(.*)>:", line):
        names[(section, int(m.group(1), 16))] = m.group(2)
        insns.append(["<function>", "", None, None])
    elif (m := re.match(r"\s+[0-9a-f]+:\s+R_\S+\s+(\S+)", line)) and insns:
        insns[-1][2] = m.group(1)
    elif m := re.match(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)", line):
        insns.append([m.group(2), m.group(3), None, (section, int(m.group(1), 16))])
        if ends_block(m.group(2)) and m.group(2) not in CALLS and (t := re.search(r"\b0x([0-9a-f]+) <", m.group(3))):
            targets.add((section, int(t.group(1), 16)))


def target(reloc):
    """The function a call's relocation names: a symbol, or a section and an offset."""
    if m := re.match(r"(.*)\+0x([0-9a-f]+)$", reloc):
        for addend in (0, 4):  # x86_64's PC-relative calls carry an addend of -4
            if (key := (m.group(1), int(m.group(2), 16) + addend)) in names:
                return names[key]
    return re.sub(r"-0x4$", "", reloc)



def is_move(mnemonic, operands):
    ops = [o.strip() for o in operands.split(",")]
    return mnemonic in ("mov", "movl", "movq") and len(ops) == 2 and \
        all(re.match(r"^%?[xwre][0-9a-z]+$", o) and o not in ("xzr", "wzr") for o in ops)


calls = size = moves = 0
by_moves = collections.Counter()
for i, (mnemonic, _, reloc, _) in enumerate(insns):
    if reloc is None or mnemonic not in CALLS or not callee.search(target(reloc)):
        continue
    start = i
    while start > 0 and not ends_block(insns[start - 1][0]) and insns[start][3] not in targets:
        start -= 1
    end = i + 1
    while end < len(insns) and insns[end][3] not in targets and not ends_block(insns[end][0]):
        end += 1
    if end < len(insns) and insns[end][3] not in targets:
        end += 1  # the branch or return that ends the block
    block = insns[start:end]
    n = sum(is_move(m, o) for m, o, _, _ in block)
    calls, size, moves = calls + 1, size + len(block), moves + n
    by_moves[n] += 1
if not calls:
    sys.exit(f"{obj}: no call to a function matching {callee.pattern}")
print(f"{obj}: {calls} calls; {size / calls:.2f} instructions per calling block, of which "
      f"{moves / calls:.2f} register-to-register moves; calls by number of moves: "
      f"{dict(sorted(by_moves.items()))}")
