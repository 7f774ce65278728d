#!/usr/bin/env python3
"""Cross-check of simengine against NEURON itself (docs/crosscheck.md).

Each case is one cell that both codes describe the same way: a single compartment, or one
unbranched NEURON section of nseg segments (simengine: a chain of nseg compartments). NEURON runs
its fixed step with secondorder = 0 and the hh rates computed exactly (usetable_hh = 0), which is
simengine's model (docs/model.md). The script writes simengine's input with h5py
(docs/input-neurons.md), runs `$MPIEXEC -n 1 $SE_BUILD_DIR/src/simengine`, runs the same cell in
NEURON, and compares the voltage of every compartment at every step and the spike times.

Branched cells differ from NEURON at the branch points (docs/crosscheck.md): --branched SWC runs
one (simengine-prep's compartments, the same compartments in NEURON) and prints the differences;
with --passive it also checks that each code equals its own linear model, built in numpy, to
rounding (simengine: pairwise coupling; NEURON: a zero-area node at each branch point), which
makes it a pass/fail case. --convergence compares both codes with NEURON at a fine d_lambda.

Environment (set by se_add_script_test): SE_BUILD_DIR, MPIEXEC. Other options: --keep DIR keeps
the files; --case NAME runs one case (--case none: none); --controls shows how far NEURON moves
with settings other than simengine's. Exits 77 (skip) when NEURON or h5py is not installed, 1 on
a failure.

  python3 tests/crosscheck_neuron.py                       # the cases (ctest -L crosscheck)
  python3 tests/crosscheck_neuron.py --case none --passive --amp 0.1 \
      --branched data/morphologies/96ML.CNG.swc            # the branch-point difference
  python3 tests/crosscheck_neuron.py --case none --convergence \
      --branched data/morphologies/cell1-8b-CA3.CNG.swc    # convergence table
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("NEURON_MODULE_OPTIONS", "-nogui")  # no "no DISPLAY" warning when headless
try:
    import neuron  # noqa: F401  (the PyPI package "neuron")
except ImportError:
    print("skipped: NEURON (pip install neuron) is not installed")
    sys.exit(77)
try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

from neuron import h

# NEURON's defaults, which are simengine's (docs/input-neurons.md)
HH = dict(gnabar=0.12, gkbar=0.036, gl=0.0003, el=-54.3)
SOMA_1000 = math.sqrt(1000.0 / math.pi)  # L = diam = 17.841241161527712 um: area 1000 um2


def region_bio(cm=1.0, ra=35.4, g_pas=0.0, e_pas=-70.0, gnabar=0.0, gkbar=0.0, gl=0.0, el=-54.3,
               ena=50.0, ek=-77.0):
    return dict(cm=cm, ra=ra, g_pas=g_pas, e_pas=e_pas, gnabar_hh=gnabar, gkbar_hh=gkbar,
                gl_hh=gl, el_hh=el, ena=ena, ek=ek)


# A case: one section of `nseg` equal segments of total length L; per compartment a diameter and
# a region code; per region the biophysics; Ra must be the same in every used region (NEURON has
# one Ra per section). Clamps: (compartment, delay, duration, amplitude).
TAPER = 31  # compartments of the tapered cable
CASES = [
    dict(name="hh_soma", desc="HH soma, 1 compartment of 1000 um2, 0.1 nA from 10 ms for 80 ms",
         L=SOMA_1000, nseg=1, diam=[SOMA_1000], region=[1],
         bio={1: region_bio(**HH)}, clamps=[(0, 10.0, 80.0, 0.1)],
         dt=0.025, tstop=100.0, v_init=-65.0, celsius=6.3, kind="hh"),
    dict(name="hh_soma_warm",
         desc="HH soma at 20 degC (q10 = 3.52), cm 1.5, v_init -70, dt 0.01, 4 pulses + a"
              " hyperpolarising step",
         L=SOMA_1000, nseg=1, diam=[SOMA_1000], region=[1],
         bio={1: region_bio(cm=1.5, **HH)},
         clamps=[(0, 5.0 + 10.0 * k, 1.0, 0.5) for k in range(4)] + [(0, 12.0, 20.0, -0.05)],
         dt=0.01, tstop=50.0, v_init=-70.0, celsius=20.0, kind="hh"),
    dict(name="hh_pas_axon", desc="HH + pas axon, nseg 21, L 500 um, d 1 um, Ra 100",
         L=500.0, nseg=21, diam=[1.0] * 21, region=[2] * 21,
         bio={2: region_bio(ra=100.0, g_pas=1e-4, e_pas=-65.0, **HH)},
         clamps=[(0, 5.0, 40.0, 0.1)],
         dt=0.025, tstop=60.0, v_init=-65.0, celsius=6.3, kind="hh"),
    dict(name="pas_cable", desc="passive cable, nseg 51, L 1000 um, d 2 um, 20 degC, v_init -50",
         L=1000.0, nseg=51, diam=[2.0] * 51, region=[3] * 51,
         bio={3: region_bio(ra=150.0, g_pas=5e-5, e_pas=-70.0, cm=0.8)},
         clamps=[(0, 2.0, 20.0, 0.05), (40, 10.0, 5.0, -0.03)],
         dt=0.01, tstop=50.0, v_init=-50.0, celsius=20.0, kind="pas"),
    dict(name="tapered_regions",
         desc="tapered cable 3 -> 0.5 um, nseg 31, 3 regions (hh / hh + pas / pas), clamp mid-way",
         L=600.0, nseg=TAPER, diam=list(np.linspace(3.0, 0.5, TAPER)),
         region=[1] * 5 + [2] * 16 + [3] * 10,
         bio={1: region_bio(ra=80.0, **HH),
              2: region_bio(ra=80.0, cm=0.9, g_pas=2e-4, e_pas=-60.0, gnabar=0.06, gkbar=0.02,
                            gl=1e-4, el=-60.0, ena=55.0, ek=-80.0),
              3: region_bio(ra=80.0, cm=2.0, g_pas=1e-4, e_pas=-75.0)},
         clamps=[(12, 5.0, 30.0, 0.15)],
         dt=0.025, tstop=50.0, v_init=-62.0, celsius=10.0, kind="hh"),
]


def write_input(path, c):
    n = c["nseg"]
    R = max(c["region"]) + 1
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "simengine-input"
        f.attrs["version"] = 1
        f.attrs["workload"] = "neurons"
        run = f.create_group("run")
        run.attrs["dt"] = float(c["dt"])
        run.attrs["tstop"] = float(c["tstop"])
        run.attrs["v_init"] = float(c["v_init"])
        run.attrs["celsius"] = float(c["celsius"])
        run.attrs["spike_threshold"] = 10.0
        f["morphologies/offsets"] = np.array([0, n], dtype=np.int64)
        f["morphologies/parent"] = np.arange(-1, n - 1, dtype=np.int32)
        f["morphologies/length"] = np.full(n, c["L"] / n, dtype=np.float64)
        f["morphologies/diameter"] = np.asarray(c["diam"], dtype=np.float64)
        f["morphologies/region"] = np.asarray(c["region"], dtype=np.int32)
        f["cells/morphology"] = np.zeros(1, dtype=np.int32)
        default = region_bio()
        for key in default:
            f[f"biophysics/{key}"] = np.array(
                [c["bio"].get(r, default)[key] for r in range(R)], dtype=np.float64)
        cl = c["clamps"]
        f["stimuli/iclamp/cell"] = np.zeros(len(cl), dtype=np.int64)
        f["stimuli/iclamp/compartment"] = np.array([x[0] for x in cl], dtype=np.int32)
        f["stimuli/iclamp/delay"] = np.array([x[1] for x in cl], dtype=np.float64)
        f["stimuli/iclamp/duration"] = np.array([x[2] for x in cl], dtype=np.float64)
        f["stimuli/iclamp/amplitude"] = np.array([x[3] for x in cl], dtype=np.float64)
        rec = f.create_group("record")
        rec.attrs["every"] = 1
        rec.attrs["compartments"] = "all"
        rec.attrs["dtype"] = "float64"


def simengine(inp, out):
    exe = os.path.join(os.environ.get("SE_BUILD_DIR", "build"), "src", "simengine")
    mpiexec = os.environ.get("MPIEXEC") or "mpiexec"
    cmd = [mpiexec, "-n", "1", exe, "-q", "--threads", "1", inp, "-o", out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    with h5py.File(out, "r") as f:
        return f["report/default/data"][:], f["spikes/default/timestamps"][:]


def run_simengine(c, work):
    inp, out = os.path.join(work, f"{c['name']}.h5"), os.path.join(work, f"{c['name']}.out.h5")
    write_input(inp, c)
    return simengine(inp, out)


def set_neuron_run(dt, celsius, usetable=0, secondorder=0):
    h.usetable_hh = usetable
    h.secondorder = secondorder
    h.celsius = celsius
    h.dt = dt


def advance(nrec_vectors, v_init, steps):
    """finitialize(v_init), then `steps` fadvance calls: the recorded vectors hold steps + 1
    values, at t = 0, dt, ..., steps dt (NEURON's t accumulates dt/2 twice per step, which
    changes nothing in the equations: the clamp boundaries are far from the half steps)."""
    h.finitialize(v_init)
    for _ in range(steps):
        h.fadvance()
    return np.array([np.asarray(r) for r in nrec_vectors]).T


def run_neuron(c, usetable=0, secondorder=0, shift_clamp=0.0):
    """The case in NEURON. Returns v [steps + 1, nseg] at the segment centres and the voltages of
    the two zero-area end nodes, x = 0 and x = 1 [steps + 1, 2]."""
    n = c["nseg"]
    ras = {c["bio"][r]["ra"] for r in set(c["region"])}
    assert len(ras) == 1, "one Ra per section"
    sec = h.Section(name=c["name"])
    sec.nseg = n
    sec.L = c["L"]
    sec.Ra = ras.pop()
    used = [c["bio"][r] for r in set(c["region"])]
    has_hh = any(b["gnabar_hh"] > 0 or b["gkbar_hh"] > 0 or b["gl_hh"] > 0 for b in used)
    has_pas = any(b["g_pas"] > 0 for b in used)
    if has_hh:
        sec.insert("hh")
    if has_pas:
        sec.insert("pas")
    segs = list(sec)
    assert len(segs) == n
    for i, seg in enumerate(segs):
        # seg.diam without 3-d points: each segment is a cylinder of that diameter, and each
        # half segment's axial resistance uses it (NEURON's ri), as simengine's R_i / 2
        b = c["bio"][c["region"][i]]
        seg.diam = c["diam"][i]
        seg.cm = b["cm"]
        if has_hh:  # hh with zero conductances where the region has none: zero current
            seg.hh.gnabar, seg.hh.gkbar = b["gnabar_hh"], b["gkbar_hh"]
            seg.hh.gl, seg.hh.el = b["gl_hh"], b["el_hh"]
            seg.ena, seg.ek = b["ena"], b["ek"]
        if has_pas:
            seg.pas.g, seg.pas.e = b["g_pas"], b["e_pas"]
    stims = []
    for comp, delay, dur, amp in c["clamps"]:
        s = h.IClamp(segs[comp])  # at the segment centre, x = (comp + 0.5) / nseg
        s.delay, s.dur, s.amp = delay + shift_clamp, dur, amp
        stims.append(s)
    recs = []
    for ref in [seg._ref_v for seg in segs] + [sec(0)._ref_v, sec(1)._ref_v]:
        vec = h.Vector()
        vec.record(ref)
        recs.append(vec)
    set_neuron_run(c["dt"], c["celsius"], usetable, secondorder)
    v = advance(recs, c["v_init"], int(round(c["tstop"] / c["dt"])))
    del stims, recs, segs, sec
    return v[:, :n], v[:, n:]


def threshold_crossings(v0, dt, thr=10.0):
    """Spike times of a trace by simengine's rule (docs/model.md): a step with
    v^k < thr <= v^{k+1} gives t = k dt + dt (thr - v^k) / (v^{k+1} - v^k)."""
    k = np.nonzero((v0[:-1] < thr) & (v0[1:] >= thr))[0]
    return k * dt + dt * (thr - v0[k]) / (v0[k + 1] - v0[k])


# Tolerances (docs/crosscheck.md). Both codes do the same arithmetic up to the order of operations
# and the units (NEURON works per unit area, mA/cm2; its cnexp code writes x_inf as
# -(x_inf/tau)/(-1/tau); and for a mod file without CONDUCTANCE hints, as hh.mod, it takes di/dv
# as a finite difference over 0.001 mV, exact for currents linear in v up to rounding); so each
# step differs by a few ulps. In a passive cell the system is linear and strongly stable, and the
# rounding does not accumulate: a few ulps of ~70 mV, 1e-14 mV. In HH it is amplified where the
# dynamics are sensitive: a spike-time shift dt_s shows as dV/dt * dt_s, and dV/dt reaches
# ~500 mV/ms on the upstroke. Measured: <= 6e-10 mV and <= 3e-12 ms in 100 ms, 6 spikes.
TOL = {"hh": dict(v=1e-8, spike=1e-10), "pas": dict(v=1e-11, spike=1e-12)}


def check_case(c, work):
    """Returns (ok, row) for the table of docs/crosscheck.md."""
    v_se, sp_se = run_simengine(c, work)
    v_nrn, v_end = run_neuron(c)
    steps = int(round(c["tstop"] / c["dt"]))
    tol = TOL[c["kind"]]
    errors = []
    if v_se.shape != (steps, c["nseg"]):
        errors.append(f"report has shape {v_se.shape}, expected {(steps, c['nseg'])}")
        v_se = np.full((steps, c["nseg"]), np.nan)
    dv = np.abs(v_se - v_nrn[:steps])
    dvmax = float(np.nanmax(dv)) if not np.isnan(dv).all() else float("nan")
    vrange = float(v_nrn.max() - v_nrn.min())
    # NEURON's zero-area end nodes follow the end segments exactly (one neighbour, no membrane)
    dend = max(float(np.abs(v_end[:, 0] - v_nrn[:, 0]).max()),
               float(np.abs(v_end[:, 1] - v_nrn[:, -1]).max()))
    sp_nrn = threshold_crossings(v_nrn[:, 0], c["dt"])
    dsp = float(np.abs(sp_se - sp_nrn).max()) if len(sp_se) == len(sp_nrn) and len(sp_se) else 0.0
    print(f"{c['name']}: {c['desc']}")
    where = np.unravel_index(np.nanargmax(dv), dv.shape) if not np.isnan(dv).all() else (0, 0)
    print(f"  max |v_simengine - v_NEURON| = {dvmax:.2e} mV over {steps} steps x {c['nseg']}"
          f" compartments (at t = {where[0] * c['dt']:g} ms, compartment {where[1]});"
          f" voltage range {vrange:.1f} mV, relative {dvmax / vrange:.1e}; tolerance {tol['v']:g} mV")
    print(f"  NEURON end nodes x=0, x=1 vs the end segments: max |dv| = {dend:.2e} mV")
    print(f"  spikes at compartment 0: simengine {len(sp_se)}, NEURON {len(sp_nrn)};"
          f" max |dt_spike| = {dsp:.2e} ms (tolerance {tol['spike']:g} ms)")
    if not dvmax <= tol["v"]:
        errors.append(f"max |dv| = {dvmax:.3e} mV > {tol['v']:g} mV")
    if not dend <= tol["v"]:
        errors.append(f"NEURON's end nodes differ from the end segments by {dend:.3e} mV")
    if len(sp_se) != len(sp_nrn):
        errors.append(f"spike counts differ: simengine {list(sp_se)}, NEURON {list(sp_nrn)}")
    elif not dsp <= tol["spike"]:
        errors.append(f"spike times differ by {dsp:.3e} ms > {tol['spike']:g} ms")
    if c["kind"] == "hh" and len(sp_nrn) == 0:
        errors.append("no spike: the HH case does not exercise the spike dynamics")
    for e in errors:
        print(f"  FAIL: {e}")
    print(f"  {'ok' if not errors else 'FAILED'}")
    return not errors, (c["name"], c["nseg"], steps, dvmax, dvmax / vrange, len(sp_se), dsp, dend)


def controls(work):
    """How far NEURON moves from simengine when its settings differ from simengine's model:
    shows that the comparison resolves each of these choices."""
    c = CASES[0]
    v_se, sp_se = run_simengine(c, work)
    steps = v_se.shape[0]
    print("controls: hh_soma with NEURON settings that differ from simengine's model")
    for label, kw in [("exact rates (the model)", {}),
                      ("usetable_hh = 1 (NEURON's default rate tables)", dict(usetable=1)),
                      ("secondorder = 2 (Crank-Nicolson)", dict(secondorder=2)),
                      ("clamp delay + 1e-6 ms", dict(shift_clamp=1e-6)),
                      ("clamp delay + dt/2 (boundary moved by one step)", dict(shift_clamp=c["dt"] / 2))]:
        v, _ = run_neuron(c, **kw)
        sp = threshold_crossings(v[:, 0], c["dt"])
        dsp = np.abs(sp - sp_se).max() if len(sp) == len(sp_se) else float("nan")
        print(f"  {label}: max |dv| = {np.abs(v[:steps] - v_se).max():.2e} mV,"
              f" spikes {len(sp)}, max |dt_spike| = {dsp:.2e} ms")


# ---- branched morphologies: the size of the branch-point difference (informational) ----------

def neuron_from_tree(par, length, diam, region, bio, soma_x):
    """NEURON cell with simengine's compartments: each run of compartments of one section becomes
    a NEURON section with one segment per compartment (same length, diameter, region). The only
    differences left are NEURON's zero-area nodes at the section ends: at a branch point the
    parent's last segment and the children's first segments meet at one node (a star), and the
    soma's children hang from soma(soma_x)."""
    n = len(par)
    nchild = np.bincount(par[1:], minlength=n)
    assert region[0] == 1, "the tree must have a soma at compartment 0"
    starts = [i for i in range(1, n) if par[i] != i - 1 or par[i] == 0 or nchild[par[i]] > 1
              or region[i] != region[par[i]]]
    bounds = starts + [n]
    soma = h.Section(name="soma")
    soma.L, soma.diam, soma.nseg = length[0], diam[0], 1
    secs, owner = [], {0: (soma, 0)}
    for s, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        assert np.allclose(length[a:b], length[a], rtol=1e-12), "segments of a section differ"
        sec = h.Section(name=f"sec{s}")
        sec.nseg, sec.L = b - a, float(np.sum(length[a:b]))
        secs.append(sec)
        for i in range(a, b):
            owner[i] = (sec, i - a)
    segs_of = {}
    for sec in [soma] + secs:
        segs_of[sec.name()] = list(sec)
    for i in range(n):
        sec, j = owner[i]
        b = bio[region[i]]
        sec.Ra = b["ra"]
        seg = segs_of[sec.name()][j]
        seg.diam, seg.cm = diam[i], b["cm"]
    for sec, a in zip(secs, starts):
        p = par[a]
        if p == 0:
            sec.connect(soma(soma_x), 0)
        else:
            psec, j = owner[p]
            assert j == psec.nseg - 1, "a section hangs from the last segment of its parent"
            sec.connect(psec(1), 0)
    allsecs = [soma] + secs
    for sec in allsecs:
        sec.insert("hh")
        sec.insert("pas")
    for i in range(n):
        sec, j = owner[i]
        b = bio[region[i]]
        seg = segs_of[sec.name()][j]
        seg.hh.gnabar, seg.hh.gkbar, seg.hh.gl, seg.hh.el = (
            b["gnabar_hh"], b["gkbar_hh"], b["gl_hh"], b["el_hh"])
        seg.ena, seg.ek = b["ena"], b["ek"]
        seg.pas.g, seg.pas.e = b["g_pas"], b["e_pas"]
    segs = [segs_of[owner[i][0].name()][owner[i][1]] for i in range(n)]
    return allsecs, segs, starts


def linear_models(par, length, diam, region, bio, starts, soma_x, dt, steps, amp, v_init):
    """Backward Euler of the passive cell in numpy, two ways: simengine's pairwise coupling
    g = 1 / (R_i/2 + R_p/2), and NEURON's star (a zero-area node at every section end, joined to
    each adjoining segment centre by that half segment's resistance; the soma's children hang
    from soma(soma_x)). Clamp on compartment 0 from 5 ms for 40 ms. Returns both traces."""
    n = len(par)
    cm = np.array([bio[r]["cm"] for r in region])
    ra = np.array([bio[r]["ra"] for r in region])
    gp = np.array([bio[r]["g_pas"] for r in region])
    ep = np.array([bio[r]["e_pas"] for r in region])
    area = np.pi * diam * length
    C, Gm = cm * area * 1e-5, gp * area * 1e-2  # nF, uS
    half = 4.0 * ra * (length / 2) / (np.pi * diam ** 2) * 1e-2  # Mohm

    def run(G, nn):
        Cfull = np.zeros(nn)
        Cfull[:n] = C
        A = np.diag(Cfull / dt) + G
        Ainv = np.linalg.inv(A)
        v = np.full(nn, v_init)
        out = np.empty((steps, n))
        for k in range(steps):
            out[k] = v[:n]
            t = k * dt
            b = Cfull / dt * v
            b[:n] += Gm * ep
            if 5.0 <= t + dt / 2 < 45.0:
                b[0] += amp
            v = Ainv @ b
        return out

    def add(G, i, j, g):
        G[i, i] += g
        G[j, j] += g
        G[i, j] -= g
        G[j, i] -= g

    G = np.diag(Gm.copy())
    for i in range(1, n):
        add(G, i, par[i], 1.0 / (half[i] + half[par[i]]))
    pairwise = run(G, n)
    # star: one node per distinct parent of a section start (its distal end), soma included
    junctions = sorted({par[a] for a in starts if par[a] != 0 or soma_x != 0.5})
    node = {p: n + k for k, p in enumerate(junctions)}
    nn = n + len(junctions)
    G = np.zeros((nn, nn))
    G[:n, :n] = np.diag(Gm)
    start_set = set(starts)
    for i in range(1, n):
        if i not in start_set:  # inside a section: adjacent centres, NEURON's interior coupling
            add(G, i, par[i], 1.0 / (half[i] + half[par[i]]))
    for p in junctions:
        add(G, p, node[p], 1.0 / half[p])
    for a in starts:
        p = par[a]
        if p == 0 and soma_x == 0.5:  # children join the soma's centre node directly
            add(G, a, 0, 1.0 / half[a])
        else:
            add(G, a, node[p], 1.0 / half[a])
    star = run(G, nn)
    return pairwise, star


def branched(swc, work, d_lambda, amp, passive):
    """simengine-prep builds the compartments of `swc` (docs/prep.md defaults: HH soma and axon,
    passive dendrites; with `passive`, pas everywhere); simengine runs it, and NEURON runs the
    same compartments (neuron_from_tree). Prints the differences; not a pass/fail check."""
    inp, out = os.path.join(work, "branched.h5"), os.path.join(work, "branched.out.h5")
    prep = os.path.join(os.environ.get("SE_BUILD_DIR", "build"), "src", "simengine-prep")
    dt, tstop = 0.025, 50.0
    extra = []
    if passive:
        extra = ["--set", "all:gnabar_hh=0", "--set", "all:gkbar_hh=0", "--set", "all:gl_hh=0",
                 "--set", "all:g_pas=3.3333e-5", "--set", "all:e_pas=-65"]
    subprocess.run([prep, "neurons", "-o", inp, "--swc", swc, "--d-lambda", str(d_lambda),
                    "--iclamp-all", f"5:40:{amp}", "--tstop", str(tstop), "--dt", str(dt),
                    "--record", "all", "--record-dtype", "float64"] + extra,
                   check=True, capture_output=True)
    v_se, sp_se = simengine(inp, out)
    with h5py.File(inp, "r") as f:
        par = f["morphologies/parent"][:].astype(int)
        length, diam = f["morphologies/length"][:], f["morphologies/diameter"][:]
        region = f["morphologies/region"][:].astype(int)
        keys = ["cm", "ra", "g_pas", "e_pas", "gnabar_hh", "gkbar_hh", "gl_hh", "el_hh", "ena", "ek"]
        arr = {k: f[f"biophysics/{k}"][:] for k in keys}
        run = dict(f["run"].attrs)
    v_init = float(run.get("v_init", -65.0))
    bio = {r: {k: float(arr[k][r]) for k in keys} for r in range(len(arr["cm"]))}
    n = len(par)
    nchild = np.bincount(par[1:], minlength=n)
    depth = np.zeros(n, dtype=int)
    for i in range(1, n):
        depth[i] = depth[par[i]] + 1
    tips = np.nonzero(nchild == 0)[0]
    far = tips[np.argmax(depth[tips])]
    print(f"branched: {os.path.basename(swc)}, d_lambda {d_lambda}, "
          f"{'passive' if passive else 'HH soma and axon, passive dendrites'}: {n} compartments,"
          f" {int(np.sum(nchild[1:] > 1))} branch points, {int(nchild[0])} children of the soma;"
          f" {amp} nA into the soma from 5 ms for 40 ms, dt {dt}")
    steps = v_se.shape[0]
    ok = True
    for soma_x in (1.0, 0.5):
        allsecs, segs, starts = neuron_from_tree(par, length, diam, region, bio, soma_x)
        stim = h.IClamp(segs[0])
        stim.delay, stim.dur, stim.amp = 5.0, 40.0, amp
        recs = []
        for seg in segs:
            vec = h.Vector()
            vec.record(seg._ref_v)
            recs.append(vec)
        set_neuron_run(dt, float(run.get("celsius", 6.3)))
        v = advance(recs, v_init, steps)[:steps]
        dv = np.abs(v - v_se)
        line = f"  NEURON, soma children at soma({soma_x:g}): max |dv| soma {dv[:, 0].max():.4f} mV,"
        if passive:
            defl = np.abs(v_se[:, 0] - v_init).max()
            pairwise, star = linear_models(par, length, diam, region, bio, starts, soma_x, dt,
                                           steps, amp, v_init)
            line += (f" ({dv[:, 0].max() / defl:.2%} of the soma's peak deflection {defl:.3f} mV),"
                     f" any compartment {dv.max():.4f} mV, farthest tip (compartment {far}, depth"
                     f" {depth[far]}) {dv[:, far].max():.4f} mV;\n    numpy: simengine vs"
                     f" pairwise {np.abs(v_se - pairwise).max():.1e} mV, NEURON vs star"
                     f" {np.abs(v - star).max():.1e} mV")
            # the attribution: each code is its own linear model to rounding
            for what, d in [("simengine vs the pairwise model", np.abs(v_se - pairwise).max()),
                            ("NEURON vs the star model", np.abs(v - star).max())]:
                if not d <= TOL["hh"]["v"]:
                    line += f"\n  FAIL: {what}: {d:.3e} mV > {TOL['hh']['v']:g} mV"
                    ok = False
        else:
            sp = threshold_crossings(v[:, 0], dt)
            sub = (v[:, 0] < -50.0) & (v_se[:, 0] < -50.0)
            dsp = np.abs(sp - sp_se).max() if len(sp) == len(sp_se) and len(sp) else float("nan")
            line += (f" ({dv[sub, 0].max():.4f} mV where both are below -50 mV), any compartment"
                     f" {dv.max():.4f} mV, farthest tip (compartment {far}, depth {depth[far]})"
                     f" {dv[:, far].max():.4f} mV; spikes simengine {len(sp_se)}, NEURON {len(sp)},"
                     f" max |dt_spike| = {dsp:.4f} ms")
        print(line)
        del stim, recs, segs, allsecs
    return ok


def convergence(swc, work, d_lambdas, amp, passive):
    """Spatial convergence of both codes on the same compartments of `swc` (soma clamp `amp` nA
    from 5 ms for 40 ms, dt 0.025): the reference is NEURON at the finest d_lambda (both codes
    converge to the same cable equation; the common time-step error cancels)."""
    dt, steps = 0.025, 2000
    prep = os.path.join(os.environ.get("SE_BUILD_DIR", "build"), "src", "simengine-prep")
    extra = []
    if passive:
        extra = ["--set", "all:gnabar_hh=0", "--set", "all:gkbar_hh=0", "--set", "all:gl_hh=0",
                 "--set", "all:g_pas=3.3333e-5", "--set", "all:e_pas=-65"]
    res = []
    for dl in sorted(d_lambdas, reverse=True):
        inp, out = os.path.join(work, "conv.h5"), os.path.join(work, "conv.out.h5")
        subprocess.run([prep, "neurons", "-o", inp, "--swc", swc, "--d-lambda", str(dl),
                        "--iclamp-all", f"5:40:{amp}", "--tstop", str(steps * dt), "--dt", str(dt),
                        "--record", "soma", "--record-dtype", "float64"] + extra,
                       check=True, capture_output=True)
        v_se = simengine(inp, out)[0][:, 0]
        with h5py.File(inp, "r") as f:
            par = f["morphologies/parent"][:].astype(int)
            length, diam = f["morphologies/length"][:], f["morphologies/diameter"][:]
            region = f["morphologies/region"][:].astype(int)
            keys = ["cm", "ra", "g_pas", "e_pas", "gnabar_hh", "gkbar_hh", "gl_hh", "el_hh",
                    "ena", "ek"]
            arr = {k: f[f"biophysics/{k}"][:] for k in keys}
        bio = {r: {k: float(arr[k][r]) for k in keys} for r in range(len(arr["cm"]))}
        allsecs, segs, _ = neuron_from_tree(par, length, diam, region, bio, 0.5)
        stim = h.IClamp(segs[0])
        stim.delay, stim.dur, stim.amp = 5.0, 40.0, amp
        rec = h.Vector()
        rec.record(segs[0]._ref_v)
        set_neuron_run(dt, 6.3)
        v_n = advance([rec], -65.0, steps)[:steps, 0]
        res.append((dl, len(par), v_se, v_n))
        del stim, rec, segs, allsecs
    ref = res[-1][3]
    sp_ref = threshold_crossings(ref, dt)
    print(f"convergence: {os.path.basename(swc)}, {'passive' if passive else 'HH soma and axon'},"
          f" {amp} nA at the soma; reference: NEURON at d_lambda {res[-1][0]} ({res[-1][1]}"
          f" compartments)")
    print("| d_lambda | compartments | soma max abs error, simengine (mV) | NEURON (mV) |"
          + ("" if passive else " first spike error, simengine (ms) | NEURON (ms) |"))
    print("| --- | --- | --- | --- |" + ("" if passive else " --- | --- |"))
    for dl, n, a, b in res:
        row = f"| {dl:g} | {n} | {np.abs(a - ref).max():.2e} | {np.abs(b - ref).max():.2e} |"
        if not passive:
            sa, sb = threshold_crossings(a, dt), threshold_crossings(b, dt)
            if len(sa) and len(sb) and len(sp_ref):
                row += f" {sa[0] - sp_ref[0]:+.2e} | {sb[0] - sp_ref[0]:+.2e} |"
            else:
                row += " - | - |"
        print(row)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", help="keep the simengine files in this directory")
    ap.add_argument("--case", action="append", help="run only this case (repeatable)")
    ap.add_argument("--controls", action="store_true",
                    help="also show how much NEURON moves with other settings (tables, CN, clamp)")
    ap.add_argument("--branched", metavar="SWC", action="append",
                    help="also compare a branched morphology (informational, not a pass/fail)")
    ap.add_argument("--d-lambda", type=float, action="append",
                    help="d_lambda values for --branched (default 0.1)")
    ap.add_argument("--amp", type=float, default=0.5, help="soma clamp of --branched, nA")
    ap.add_argument("--passive", action="store_true",
                    help="--branched with pas everywhere, also checked against numpy models")
    ap.add_argument("--convergence", action="store_true",
                    help="--branched: spatial convergence of both codes over --d-lambda values"
                         " (default 0.1 0.03 0.01 0.003 0.001)")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="crosscheck_")
    os.makedirs(work, exist_ok=True)
    print(h.nrnversion())
    passed = failed = 0
    rows = []
    try:
        for c in CASES:
            if args.case and c["name"] not in args.case:
                continue
            try:
                ok, row = check_case(c, work)
                rows.append(row)
            except Exception as e:  # a failed run is a failed case, the others still run
                print(f"{c['name']}: FAIL: {e}")
                ok = False
            passed += ok
            failed += not ok
        if rows:
            print("\n| case | compartments | steps | max abs dv (mV) | relative to range |"
                  " spikes | max abs dt_spike (ms) | NEURON end nodes (mV) |")
            print("| --- | --- | --- | --- | --- | --- | --- | --- |")
            for r in rows:
                print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.1e} | {r[4]:.1e} | {r[5]} | {r[6]:.1e} |"
                      f" {r[7]:.1e} |")
            print()
        if args.controls:
            controls(work)
        for swc in (args.branched or []) if args.convergence else []:
            convergence(swc, work, args.d_lambda or [0.1, 0.03, 0.01, 0.003, 0.001], args.amp,
                        args.passive)
        for swc in (args.branched or []) if not args.convergence else []:
            for dl in args.d_lambda or [0.1]:
                try:
                    ok = branched(swc, work, dl, args.amp, args.passive)
                except Exception as e:
                    print(f"branched {swc}: FAIL: {e}")
                    ok = False
                if args.passive:  # the numpy attribution is a check; the active run is not
                    passed += ok
                    failed += not ok
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
