# Static SASS counts of the coop kernel's phase-1a loop (docs/gpu.md "coop", the staged hh
# paragraph). Input: `nvdisasm -c -g -hex` of a cubin built with -lineinfo, e.g.
#   nvcc -cubin -arch=sm_90 -O3 --fmad=false -lineinfo -std=c++17 -Icuda -Isrc -Iinclude \
#     -o coop.cubin cuda/neurons_coop.cu && nvdisasm -c -g -hex coop.cubin > coop.sass
# Usage: python3 step_coop_s6_sass_loops.py coop.sass [L]   (L: threads per cell, default 4)
# Lists every loop of step_coop<L> (a backward branch) of 90 to 1 500 instructions with the
# lines of neurons_coop.cu it covers, then for each loop whose body holds hh.h (phase 1a): the
# instructions by source file and the memory operations. "waits": instructions whose control bits
# wait on a scoreboard (bits 52-57 of the second word); "@!PT LDS": the placeholders ptxas puts
# before LDGSTS.
import re, sys
from collections import Counter
txt = open(sys.argv[1]).read().split('\n')
L = sys.argv[2] if len(sys.argv) > 2 else '4'
start = [i for i, l in enumerate(txt) if re.match(r'^\.text\..*step_coopILi%sE' % L, l)][0]
ins, labels, pend, cur = [], {}, [], ('?', 0)
i = start + 1
while i < len(txt) and not txt[i].startswith('.text.'):
    l = txt[i]
    m = re.match(r'^(\.L_x_\d+):', l)
    if m: pend.append(m.group(1))
    m = re.search(r'//## File "([^"]+)", line (\d+)', l)
    if m: cur = (m.group(1).split('/')[-1], int(m.group(2)))
    m = re.match(r'^\s*/\*([0-9a-f]+)\*/\s+(.*?);\s*/\* (0x[0-9a-f]+) \*/', l)
    if m:
        hi = int(re.search(r'/\* (0x[0-9a-f]+) \*/', txt[i + 1]).group(1), 16)
        ins.append((int(m.group(1), 16), m.group(2).strip(), (hi >> 52) & 0x3f, cur))
        for p in pend: labels[p] = ins[-1][0]
        pend = []
    i += 1
print("step_coop<%s>: %d instructions" % (L, len(ins)))
ops = [('LDG', r'\bLDG\.'), ('LDGSTS', r'LDGSTS'), ('LDS', r'(?<!@!PT )\bLDS\b'),
       ('@!PT LDS', r'@!PT LDS'), ('STG', r'\bSTG'), ('STS', r'\bSTS'), ('DEPBAR', r'DEPBAR'),
       ('SHFL', r'SHFL'), ('CALL', r'\bCALL')]
for a, t, _, _ in ins:
    m = re.search(r'BRA\s+`\((\.L_x_\d+)\)', t)
    if not (m and m.group(1) in labels and labels[m.group(1)] < a):
        continue
    body = [x for x in ins if labels[m.group(1)] <= x[0] <= a]
    if not 90 <= len(body) <= 1500:
        continue
    lines = sorted(set(x[3][1] for x in body if x[3][0] == 'neurons_coop.cu'))
    print("loop [%5x..%5x] %4d instructions, neurons_coop.cu lines %s..%s" %
          (body[0][0], a, len(body), lines[0] if lines else '-', lines[-1] if lines else '-'))
    files = Counter(x[3][0] for x in body)
    if 'hh.h' in files:
        print("  phase 1a: by source file: " + ', '.join('%s %d' % kv for kv in files.most_common()))
        print("  " + ', '.join('%s %d' % (k, sum(1 for x in body if re.search(p, x[1])))
                               for k, p in ops) + ', waits %d' % sum(1 for x in body if x[2]))
