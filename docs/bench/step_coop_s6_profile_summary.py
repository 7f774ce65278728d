#!/usr/bin/env python3
"""Summary of the coop step's source-level profile (docs/bench/step_coop_s6_profile.sh): stall
samples and executed warp instructions per phase of step_coop (by the line of
cuda/neurons_coop.cu that owns each SASS address; an address of an inlined header belongs to the
nearest neurons_coop.cu address before it), stall reasons per phase, and the top source lines.
Usage: step_coop_s6_profile_summary.py CUDA_SASS.csv SASS.csv"""
import bisect
import csv
import sys

# first line of each phase in cuda/neurons_coop.cu (as profiled in session 6)
PHASES = [(0, "setup"), (100, "0 (v copies, a v + c, clamps)"), (203, "1a (hh rows)"),
          (226, "1b (elimination)"), (313, "2/3a (events)"), (400, "3b (substitution)"),
          (446, "end (spikes, v out)")]


def phase(line):
    return [name for first, name in PHASES if line >= first][-1]


def main(cuda_sass, sass):
    owner, src, f, cur = {}, {}, None, None
    for r in csv.reader(open(cuda_sass)):
        if not r or r[0] in ("Line No", "Function Name"):
            continue
        if r[0] == "File Path":
            f = r[1].split("/")[-1]
        elif r[0]:
            cur = int(r[0]) if r[0].isdigit() else None
            if cur is not None:
                src[(f, cur)] = r[1].strip()
        elif len(r) > 2 and r[2].startswith("0x") and cur is not None:
            owner[int(r[2], 16)] = (f, cur)
    rows = list(csv.reader(open(sass)))
    idx = {h: i for i, h in enumerate(rows[1])}
    reasons = [h for h in rows[1] if h.startswith("stall_") and "Not Issued" not in h]
    samples, instr, why = {}, {}, {}
    for r in rows[2:]:
        if len(r) < 5 or not r[0].startswith("0x"):
            continue
        a = int(r[0], 16)
        samples[a] = int(r[idx["Warp Stall Sampling (All Samples)"]] or 0)
        instr[a] = int(r[idx["Instructions Executed"]] or 0)
        why[a] = {k[6:]: int(r[idx[k]] or 0) for k in reasons}
    coop = sorted((a, l) for a, (fn, l) in owner.items() if fn == "neurons_coop.cu")
    coop_addr = [a for a, _ in coop]
    per, per_i, per_w, per_line = {}, {}, {}, {}
    for a in sorted(samples):
        i = bisect.bisect_right(coop_addr, a) - 1
        line = coop[i][1] if i >= 0 else 0
        p = phase(line)
        per[p] = per.get(p, 0) + samples[a]
        per_i[p] = per_i.get(p, 0) + instr[a]
        for k, v in why[a].items():
            per_w.setdefault(p, {})[k] = per_w.get(p, {}).get(k, 0) + v
        key = owner.get(a, ("?", 0))
        per_line[key] = per_line.get(key, 0) + samples[a]
    tot, tot_i = sum(per.values()), sum(per_i.values())
    print(f"stall samples {tot}, warp instructions executed {tot_i}")
    print(f"{'phase':32s} {'samples':>8s} {'instr.':>7s}  top stall reasons (share of the phase)")
    for p in sorted(per, key=lambda x: -per[x]):
        top = sorted(((v, k) for k, v in per_w[p].items()), reverse=True)[:4]
        print(f"{p:32s} {100 * per[p] / tot:7.1f}% {100 * per_i[p] / tot_i:6.1f}%  " +
              ", ".join(f"{k} {100 * v / max(per[p], 1):.0f}%" for v, k in top))
    allw = {}
    for p in per_w:
        for k, v in per_w[p].items():
            allw[k] = allw.get(k, 0) + v
    print("all phases: " + ", ".join(f"{k} {100 * v / tot:.1f}%" for k, v in
                                      sorted(allw.items(), key=lambda x: -x[1])[:8]))
    print("top source lines (the line that owns the SASS; inlined headers under their own file):")
    for (fn, line), s in sorted(per_line.items(), key=lambda x: -x[1])[:25]:
        print(f"{100 * s / tot:5.1f}% {fn}:{line:<4d} {src.get((fn, line), '')[:88]}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
