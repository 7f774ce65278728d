"""Host check of docs/bench/s9_specialized_gen.cpp's wsolve kernel (session 12; a warp per subtree,
a lane per cell; docs/gpu.md "What is left"): runs the generated solve_w body phase by phase (each
warp's code up to barrier 1, then between the barriers, then after barrier 2; the warps of a
phase are independent, so this order is one the device may take) for one cell on a random
right-hand side, against the program's own host solve (its hu, hl, hd, hp arrays). Exits 1 above
1e-12 relative. Usage: python3 docs/bench/s12_wsolve_hostcheck.py OUT.cu (an output of
`gen wsolve ...`)."""
import re, sys, random
src = open(sys.argv[1]).read()
def arr(name, conv):
    m = re.search(r"static const (?:double|int) %s\[N\] = \{([^}]*)\};" % name, src)
    return [conv(v) for v in m.group(1).split(",")]
hu, hl, hd, hp = arr("hu", float), arr("hl", float), arr("hd", float), arr("hp", int)
N = len(hu)
body = src[src.index("solve_w("):]
body = body[body.index("const long c"):]
lines = body.split("\n")[1:]
# split into warps: "  if (w == K) {" ... "  }"
warps, cur = [], None
for ln in lines:
    if ln.startswith("  if (w == "):
        cur = [[]]; warps.append(cur); continue
    if ln == "  }": cur = None; continue
    if ln == "}": break
    if cur is None: continue
    if "bar.sync" in ln: cur.append([]); continue
    s = ln.strip().rstrip(";")
    s = re.sub(r"LDG\(b \+ \(long\)(\d+) \* S \+ c\)", r"b[\1]", s)
    s = re.sub(r"x\[\(long\)(\d+) \* S \+ c\]", r"x[\1]", s)
    s = re.sub(r"(sr|sx)\[(\d+) \* 32 \+ t\]", r"\1[\2]", s)
    s = s.replace("double ", "")
    cur[-1].append(s)
assert all(len(w) == 3 for w in warps), [len(w) for w in warps]
random.seed(1)
b = [random.uniform(0.5, 1.5) for _ in range(N)]
g = {"b": b, "x": [None] * N, "sr": {}, "sx": {}, "fma": lambda a, c, d: a * c + d}
local = [dict() for _ in warps]
for phase in range(3):
    for w, code in enumerate(warps):
        exec("\n".join(code[phase]), g, local[w])
# reference: host_solve of the generated program
r, dd = b[:], hd[:]
for i in range(N - 1, 0, -1):
    f = hu[i] / dd[i]; dd[hp[i]] -= f * hl[i]; r[hp[i]] -= f * r[i]
r[0] /= dd[0]
for i in range(1, N): r[i] = (r[i] - hl[i] * r[hp[i]]) / dd[i]
x = g["x"]
assert None not in x, "rows not written: %s" % [i for i in range(N) if x[i] is None]
err = max(abs(x[i] - r[i]) / max(abs(r[i]), 1e-300) for i in range(N))
print("%s: %d warps, max relative error %.2e" % (sys.argv[1], len(warps), err))
sys.exit(0 if err < 1e-12 else 1)
