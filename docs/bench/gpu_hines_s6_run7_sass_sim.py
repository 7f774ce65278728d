# Hot loops of k_coop<8, 6, true(, RUN7)> from `nvdisasm -c -hex` output, with a crude in-order
# issue model of one warp alone on its scheduler (docs/gpu-hines.md, "Session 6, run 7").
# Usage: python3 gpu_hines_s6_run7_sass_sim.py FILE.sass SUFFIX, SUFFIX "E" for a kernel without
# the switch, "Li<b>E" for SE_COOP_RUN7=b of the switch patch.
#
# Per loop: instructions and static stall cycles of the path a chunk executes (a chunk without
# subtree roots: a forward conditional branch taken, BRA.DIV not taken), and the cycles of that
# path when the scoreboard waits are honoured with assumed latencies (the control codes give
# the fixed-latency stalls; the variable ones below are guesses, not measurements, so only
# differences between kernels mean anything): shared loads 30 cycles to their result, MUFU 20,
# the operand reads of shared loads 4, of stores and LDGSTS 10; the copies' DEPBAR is taken
# as satisfied (6 stages: 0.17 stall cycles per instruction on the copies in session 5).
import re, sys

LAT_RESULT = {"LDS": 30, "MUFU": 20, "LDG": 400}
LAT_READ = {"LDS": 4, "STS": 10, "LDGSTS": 10, "STG": 10}


def parse(path, suffix):
    txt = open(path).read().split("\n")
    start = [i for i, l in enumerate(txt)
             if re.match(r"^\.text\..*k_coopILi8ELi6ELb1E%s" % suffix, l)][0]
    ins, labels, pend = [], {}, []
    i = start + 1
    while i < len(txt) and not txt[i].startswith(".text."):
        l = txt[i]
        m = re.match(r"^(\.L_x_\d+):", l)
        if m:
            pend.append(m.group(1))
        m = re.match(r"^\s*/\*([0-9a-f]+)\*/\s+(.*?);\s*/\* (0x[0-9a-f]+) \*/", l)
        if m:
            hi = int(re.search(r"/\* (0x[0-9a-f]+) \*/", txt[i + 1]).group(1), 16)
            ctrl = hi >> 41
            ins.append(dict(a=int(m.group(1), 16), t=m.group(2), stall=ctrl & 0xF,
                            wb=(ctrl >> 5) & 7, rb=(ctrl >> 8) & 7, wait=(ctrl >> 11) & 0x3F))
            for p in pend:
                labels[p] = len(ins) - 1
            pend = []
        i += 1
    return ins, labels


def loops(ins, labels):
    out = []
    for k, x in enumerate(ins):
        m = re.search(r"BRA\s+`\((\.L_x_\d+)\)", x["t"])
        if m and m.group(1) in labels and labels[m.group(1)] < k and 90 < k - labels[m.group(1)] < 400:
            out.append((labels[m.group(1)], k))
    return out


def path(ins, labels, head, tail):
    """The instructions of one iteration: head .. tail, forward conditional branches taken."""
    k, p = head, []
    while True:
        x = ins[k]
        p.append(x)
        if k == tail:
            return p
        m = re.search(r"BRA\s+`\((\.L_x_\d+)\)", x["t"])
        if m and "BRA.DIV" not in x["t"] and labels[m.group(1)] > k:
            k = labels[m.group(1)]
        else:
            k += 1
        if len(p) > 2000:
            raise RuntimeError("no path")


def opname(t):
    t = re.sub(r"^@!?U?P[T0-9]\s+", "", t)
    return t.split()[0].split(".")[0]


def simulate(p, iters=20):
    ready = [0] * 8
    t, starts = 0, []
    for _ in range(iters):
        starts.append(t)
        for x in p:
            for b in range(6):
                if x["wait"] >> b & 1:
                    t = max(t, ready[b])
            op = opname(x["t"])
            if x["wb"] != 7:
                ready[x["wb"]] = max(ready[x["wb"]], t + LAT_RESULT.get(op, 6))
            if x["rb"] != 7:
                ready[x["rb"]] = max(ready[x["rb"]], t + LAT_READ.get(op, 4))
            t += max(1, x["stall"])
    return (starts[-1] - starts[iters // 2]) / (iters - 1 - iters // 2)


ins, labels = parse(sys.argv[1], sys.argv[2])
seen = set()
for head, tail in loops(ins, labels):
    p = path(ins, labels, head, tail)
    kind = "backward" if any("LDGSTS" in x["t"] for x in p) else (
        "forward" if any("STG" in x["t"] for x in p) else "other")
    if kind == "other" or kind in seen:
        continue
    seen.add(kind)
    print("%s %-8s loop [%x..%x]: path %d instr, static %d cycles, modelled %.0f cycles" % (
        sys.argv[2], kind, ins[head]["a"], ins[tail]["a"], len(p),
        sum(max(1, x["stall"]) for x in p), simulate(p)))
