#!/usr/bin/env python3
"""Where the instructions of a gen warp kernel go: per warp and barrier phase.

gen's warp kernels (cuda/neurons_gen.c) are straight-line code per warp (`if (w == k) {`
branches) cut by block barriers (`SE_GEN_BAR`), so the SASS instructions of each warp between two
barriers are also the instructions it executes there. This script maps each SASS instruction of
the step kernel to its source line (nvdisasm -g), each line to its warp and phase, and prints per
phase the most instructions of a warp (what the block waits for at the barrier), the average,
and every warp's count; then the block's critical path (the phases' maxima plus the code all
warps share) against the total.

Usage:
  simengine-bench gen-source --out DIR --classes big-low
  nvcc -cubin -lineinfo -arch=sm_90 --fmad=false --std=c++17 -Isrc DIR/big-low.cu -o b.cubin
  nvdisasm -g b.cubin > b.sass
  python3 tools/gen_phases.py DIR/big-low.cu b.sass
"""
import collections
import re
import sys


def line_homes(cu_path):
    """{source line: (warp, phase)} over the step kernel; warp -1 for code all warps run."""
    homes, in_kernel, warp, phase = {}, False, -1, 0
    with open(cu_path) as f:
        for n, line in enumerate(f.read().split('\n'), 1):
            if '__global__' in line and 'se_gen_step_' in line:
                in_kernel, warp, phase = True, -1, 0
            if not in_kernel:
                continue
            m = re.match(r'\s*(\} else )?if \(w == (\d+)\) \{', line)
            if m:
                warp, phase = int(m.group(2)), 0
            if warp >= 0 and 'SE_GEN_BAR(' in line:
                phase += 1
            if warp >= 0 and line == '  }':  # the end of the warps' branches
                homes[n] = (-1, 0)
                warp = -2
                continue
            homes[n] = (warp, phase) if warp >= 0 else (-1, 0)
    if not homes:
        sys.exit(f'{cu_path}: no se_gen_step_ kernel')
    return homes


def count(cu_path, sass_path):
    """Counter {(warp, phase): instructions} of the step kernel's SASS."""
    homes = line_homes(cu_path)
    counts, line, inside = collections.Counter(), None, False
    with open(sass_path) as f:
        for text in f:
            if text.lstrip().startswith('.section') and '.text.se_gen_step_' in text:
                inside = True
                continue
            if inside and text.startswith('//----'):
                inside = False
            if not inside:
                continue
            m = re.search(r'//## File .*, line (\d+)', text)
            if m:
                line = int(m.group(1))
            elif re.search(r'/\*[0-9a-f]{4,}\*/\s+\S', text):
                counts[homes.get(line, (-1, 0))] += 1
    if not counts:
        sys.exit(f'{sass_path}: no instructions of a se_gen_step_ kernel (nvdisasm -g output?)')
    return counts


def main():
    if len(sys.argv) != 3 or sys.argv[1] in ('-h', '--help'):
        print(__doc__)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    counts = count(sys.argv[1], sys.argv[2])
    warps = sorted({w for w, _ in counts if w >= 0})
    phases = sorted({p for w, p in counts if w >= 0})
    common = sum(v for (w, _), v in counts.items() if w < 0)
    total = sum(counts.values())
    crit = common
    for p in phases:
        per = [counts[(w, p)] for w in warps]
        crit += max(per)
        print(f'phase {p}: most {max(per):6d}, average {sum(per) / len(per):8.1f}, per warp {per}')
    print(f'critical path {crit} instructions ({common} shared by all warps), total {total}, '
          f'{len(warps)} warps, {len(phases)} phases')


if __name__ == '__main__':
    main()
