#!/usr/bin/env python3
"""Fuzz the input readers of simengine and simengine-prep (docs/development.md, "Tests").

Usage:
    python3 tools/fuzz_inputs.py --bin BUILD/src [--kind neurons,swc,tdbem] [--random N]
                                 [--seed S] [--np 1,2] [--timeout 60] [--jobs 2] [--work DIR]
                                 [--start K] [--every M] [--morphologies DIR] [--keep]

BUILD is best an AddressSanitizer + UBSan build, e.g.
    cmake -B /tmp/build-asan -S . -DCMAKE_BUILD_TYPE=Debug -DSIMENGINE_CUDA=OFF \
        -DCMAKE_C_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" \
        -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
    cmake --build /tmp/build-asan -j2 --target simengine simengine-prep

Kinds:
  neurons  a valid input from `simengine-prep neurons`, then every dataset and attribute
           mutated with h5py (deleted, emptied, wrong rank, wrong dtype, NaN/Inf/negative/huge
           values, out-of-range indices, lengths that disagree, replaced by a group), plus N
           random combinations and truncated/corrupted files; each run by `simengine` on every
           rank count of --np.
  swc      random line mutations of the SWC files in --morphologies (cycles, missing parents,
           duplicate ids, NaN, huge radii, zero lengths, garbage, long lines, no soma), each
           imported by `simengine-prep neurons --swc FILE:1`.
  tdbem    a small `simengine-prep tdbem` case mutated as the neurons input, run by `simengine`.

The HDF5 cases of a kind are the same list, in the same order, for the same --seed, --random and
seed file: the single mutations (datasets, then attributes, then deleted groups), the random
combinations, the file corruptions. --start K skips the first K cases (to resume a campaign that
stopped after K cases), --every M runs only every Mth case (a sample); case directories keep
their index in the whole list.

Each run is classified: clean-error (non-zero exit, a message naming the file), success, crash
(a signal or a sanitizer report), hang (timeout), unclear-error (non-zero exit without the file
name in the message), accepted-invalid (exit 0 on a mutation that breaks the contract), leftover
(a failed run left OUT or OUT.tmp behind). Every case that is not clean-error or an expected
success is listed with its command and output in DIR/report.txt; the inputs stay in DIR.
Exit status 1 when anything was found. Needs numpy and h5py. Not run by ctest (minutes).
"""
import argparse
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys

import h5py
import numpy as np

ENV_EXTRA = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:allocator_may_return_null=1",
    "UBSAN_OPTIONS": "print_stacktrace=1",
    "OMP_NUM_THREADS": "1",
    "OMP_WAIT_POLICY": "passive",
}


# ---- generic HDF5 mutations -----------------------------------------------------------------

def h5_items(path):
    """(datasets, attributes) of a file: dataset paths; (object path, attribute name) pairs."""
    dsets, attrs = [], []
    with h5py.File(path, "r") as f:
        for k in f.attrs:
            attrs.append(("/", k))

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                dsets.append("/" + name)
            for k in obj.attrs:
                attrs.append(("/" + name, k))
        f.visititems(visit)
    return dsets, attrs


def replace(f, path, data, **kw):
    attrs = dict(f[path].attrs) if path in f else {}
    if path in f:
        del f[path]
    d = f.create_dataset(path, data=data, **kw)
    for k, v in attrs.items():
        d.attrs[k] = v


def with_value(arr, idx, value):
    a = np.array(arr)
    if a.size == 0:
        return None
    flat = a.reshape(-1).copy()
    flat[idx % flat.size] = value
    return flat.reshape(a.shape)


def dataset_mutations(f, path, rng):
    """Yields (label, function(f), invalid) for dataset path of the open file f (read only)."""
    d = f[path]
    a = d[()]
    kind = d.dtype.kind
    n = a.shape[0] if a.ndim else 1
    muts = []
    muts.append(("delete", lambda g: g.__delitem__(path), None))
    muts.append(("empty", lambda g: replace(g, path, np.zeros((0,) + a.shape[1:], a.dtype)), True))
    muts.append(("group", lambda g: (g.__delitem__(path), g.create_group(path)), True))
    muts.append(("rank+1", lambda g: replace(g, path, a.reshape(a.shape + (1,))), True))
    muts.append(("scalar", lambda g: replace(g, path, a.reshape(-1)[0] if a.size else 0), True))
    if a.ndim >= 1 and a.shape[0] > 1:
        muts.append(("drop-last", lambda g: replace(g, path, a[:-1]), True))
    muts.append(("append", lambda g: replace(g, path, np.concatenate([a, a[-1:]]) if a.ndim and a.size else a), True))
    muts.append(("chunked-gzip", lambda g: replace(g, path, a, chunks=True, compression="gzip"), False))
    muts.append(("big-endian", lambda g: replace(g, path, a.astype(a.dtype.newbyteorder(">"))), False))
    muts.append(("string", lambda g: replace(g, path, np.array([b"abc"] * max(n, 1))), True))
    muts.append(("bool", lambda g: replace(g, path, (a != 0) if a.size else a.astype(bool)), True))
    cmp = np.dtype([("x", a.dtype), ("y", a.dtype)])
    muts.append(("compound", lambda g: replace(g, path, np.zeros(a.shape, cmp)), True))
    muts.append(("huge-sparse", lambda g: (g.__delitem__(path),
                                           g.create_dataset(path, shape=(2**40,), dtype=a.dtype, chunks=(1024,))),
                 True))
    if kind in "iu":
        muts.append(("as-float", lambda g: replace(g, path, a.astype(np.float64)), True))
        muts.append(("as-int8", lambda g: replace(g, path, a.astype(np.int8)), None))
        muts.append(("as-uint64", lambda g: replace(g, path, a.astype(np.uint64)) if (a >= 0).all()
                     else replace(g, path, a.astype(np.int64)), False if (a >= 0).all() else False))
        for v, wheres in [(-1, "flr"), (-2, "r"), (0, "lr"), (1, "r"), (n, "lr"), (2**31 - 1, "r"),
                          (2**31, "r"), (-2**31 - 1, "r"), (2**63 - 1, "lr"), (-2**63, "r")]:
            for where in [{"f": "first", "l": "last", "r": "rand"}[w] for w in wheres]:
                idx = 0 if where == "first" else (-1 if where == "last" else rng.randrange(max(a.size, 1)))
                muts.append((f"set[{where}]={v}", lambda g, v=v, idx=idx: replace(
                    g, path, with_value(a.astype(np.int64), idx, v)) if a.size else None, None))
        muts.append(("set[last]=uint64max", lambda g: replace(g, path, with_value(a.astype(np.uint64) if (a >= 0).all() else a.astype(np.int64).astype(np.uint64), -1, 2**64 - 1)) if a.size else None, True))
        perm = np.array(rng.sample(list(a.reshape(-1)), a.size), a.dtype).reshape(a.shape)
        muts.append(("shuffle", lambda g: replace(g, path, perm), None))
        muts.append(("all-same", lambda g: replace(g, path, np.full(a.shape, a.reshape(-1)[0] if a.size else 0, a.dtype)), None))
    if kind == "f":
        muts.append(("as-int", lambda g: replace(g, path, a.astype(np.int64)), True))
        muts.append(("as-float32", lambda g: replace(g, path, a.astype(np.float32)), None))
        muts.append(("as-float16", lambda g: replace(g, path, a.astype(np.float16)), None))
        muts.append(("as-float64", lambda g: replace(g, path, a.astype(np.float64)), None))
        for v, wheres in [(np.nan, "fr"), (np.inf, "r"), (-np.inf, "r"), (-1.0, "lr"), (0.0, "r"),
                          (1e300, "r"), (-1e300, "r"), (1e-310, "r")]:
            for where in [{"f": "first", "l": "last", "r": "rand"}[w] for w in wheres]:
                idx = 0 if where == "first" else (-1 if where == "last" else rng.randrange(max(a.size, 1)))
                muts.append((f"set[{where}]={v}", lambda g, v=v, idx=idx: replace(
                    g, path, with_value(a, idx, v)) if a.size else None, None))
    return muts


def attr_mutations(f, obj, name):
    v = f[obj].attrs[name]
    muts = [("delete", lambda g: g[obj].attrs.__delitem__(name), None)]
    setters = {
        "str-empty": "", "str-junk": "junk", "str-long": "x" * 5000, "int-0": np.int64(0),
        "int-neg": np.int64(-1), "int-2": np.int64(2), "int-max": np.int64(2**63 - 1),
        "uint-max": np.uint64(2**64 - 1), "float-nan": np.float64("nan"),
        "float-inf": np.float64("inf"), "float-neg": -1.0, "float-0": 0.0, "float-tiny": 1e-300,
        "float-huge": 1e300, "array2": np.array([1, 2]), "empty-array": np.zeros(0),
    }
    if isinstance(v, (str, bytes)):
        s = v if isinstance(v, str) else v.decode()
        setters["fixed-nullpad"] = np.array(s.encode(), dtype=f"S{len(s) + 8}")
        setters["str-array"] = np.array([s, s], dtype=h5py.string_dtype())
    for label, val in setters.items():
        muts.append((label, lambda g, val=val: g[obj].attrs.__setitem__(name, val), None))
    return muts


def file_mutations(src, rng, count):
    """(label, function(path)) corrupting the file's bytes."""
    size = os.path.getsize(src)
    muts = []
    for frac in [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99]:
        cut = int(size * frac)
        muts.append((f"truncate@{cut}", lambda p, cut=cut: os.truncate(p, cut)))
    for k in range(count):
        offs = [rng.randrange(size) for _ in range(rng.choice([1, 4, 16]))]
        vals = [rng.randrange(256) for _ in offs]

        def flip(p, offs=offs, vals=vals):
            with open(p, "r+b") as fh:
                for o, v in zip(offs, vals):
                    fh.seek(o)
                    fh.write(bytes([v]))
        muts.append((f"bytes{k}@{offs[0]}", flip))
    muts.append(("zero-length", lambda p: os.truncate(p, 0)))
    muts.append(("text-file", lambda p: open(p, "w").write("not hdf5\n")))
    return muts


# ---- running and classifying -----------------------------------------------------------------

SANITIZER_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer",
                   "AddressSanitizer:", "SUMMARY: UndefinedBehaviorSanitizer")


def run(cmd, timeout, cwd):
    env = dict(os.environ, **ENV_EXTRA)
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                           errors="replace")
        return p.returncode, p.stdout + p.stderr, False
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"") + (e.stderr or b"")
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        return None, out, True


def classify(rc, out, timed_out, named, invalid, outputs):
    """named: strings of which one must appear in an error message (the file name)."""
    if timed_out:
        return "hang"
    if any(m in out for m in SANITIZER_MARKS):
        return "crash"
    if rc is not None and (rc < 0 or rc >= 128 or "signal" in out and "exited on signal" in out):
        return "crash"
    if rc == 0:
        return "accepted-invalid" if invalid is True else "success"
    left = [o for o in outputs if os.path.exists(o)]
    if left:
        return "leftover"
    if not any(n in out for n in named):
        return "unclear-error"
    return "clean-error"


class Campaign:
    def __init__(self, args):
        self.args = args
        self.results = []  # (kind, label, np, class, cmd, excerpt)
        self.work = args.work
        os.makedirs(self.work, exist_ok=True)

    def record(self, kind, label, nproc, cls, cmd, out):
        self.results.append((kind, label, nproc, cls, cmd, out))
        with open(os.path.join(self.work, "results.tsv"), "a") as fh:
            fh.write(f"{kind}\t{nproc}\t{cls}\t{label}\n")

    def summary(self):
        counts = {}
        for kind, _, _, cls, _, _ in self.results:
            counts.setdefault(kind, {}).setdefault(cls, 0)
            counts[kind][cls] += 1
        return counts


def prog(args, name):
    return os.path.join(args.bin, name)


def run_case(args, case_dir, inp, invalid, kind, label, nprocs, out_name="out.h5"):
    """Runs simengine on inp once per rank count; returns [(np, cls, cmd, out)]."""
    res = []
    for nproc in nprocs:
        outp = os.path.join(case_dir, f"np{nproc}.{out_name}")
        cmd = [prog(args, "simengine"), inp, "-o", outp, "-q"]
        if nproc > 1:
            cmd = ["mpirun", "-np", str(nproc), "--oversubscribe"] + cmd
        rc, out, to = run(cmd, args.timeout, case_dir)
        cls = classify(rc, out, to, [os.path.basename(inp)], invalid, [outp, outp + ".tmp"])
        if rc == 0 and not os.path.exists(outp):
            cls = "missing-output"
        for p in (outp, outp + ".tmp"):
            if os.path.exists(p):
                os.remove(p)
        res.append((nproc, cls, " ".join(cmd), out[-3000:]))
    return res


def h5_cases(args, seed_file, kind, rng):
    """Every (label, mutate(path), invalid) for the HDF5 seed file."""
    cases = []
    dsets, attrs = h5_items(seed_file)
    with h5py.File(seed_file, "r") as f:
        for d in dsets:
            for label, fn, inv in dataset_mutations(f, d, rng):
                cases.append((f"{d}:{label}", ("h5", fn), inv))
        for obj, name in attrs:
            for label, fn, inv in attr_mutations(f, obj, name):
                cases.append((f"{obj}@{name}:{label}", ("h5", fn), inv))
    # groups deleted
    groups = sorted({d.rsplit("/", 1)[0] for d in dsets if d.count("/") > 1})
    for g in groups:
        cases.append((f"{g}:delete-group", ("h5", lambda h, g=g: h.__delitem__(g)), None))
    # random combinations of 2-4 mutations
    single = [c for c in cases]
    for k in range(args.random):
        picks = rng.sample(single, rng.choice([2, 3, 4]))

        def combo(h, picks=picks):
            for _, (_, fn), _ in picks:
                try:
                    fn(h)
                except Exception:
                    pass
        inv = True if any(p[2] is True for p in picks) else None
        cases.append(("random:" + "+".join(p[0] for p in picks), ("h5", combo), inv))
    for label, fn in file_mutations(seed_file, rng, max(args.random // 4, 8)):
        cases.append((f"file:{label}", ("raw", fn), None))
    return cases


def do_h5_kind(args, camp, kind, seed_file, rng):
    cases = [(i, c) for i, c in enumerate(h5_cases(args, seed_file, kind, rng))
             if i >= args.start and (i - args.start) % args.every == 0]
    nprocs = [int(x) for x in args.np.split(",")]

    def one(i_case):
        i, (label, (how, fn), invalid) = i_case
        case_dir = os.path.join(camp.work, kind, f"c{i:05d}")
        os.makedirs(case_dir, exist_ok=True)
        inp = os.path.join(case_dir, "in.h5")
        shutil.copy(seed_file, inp)
        try:
            if how == "h5":
                with h5py.File(inp, "r+") as h:
                    r = fn(h)
            else:
                fn(inp)
        except Exception as e:  # the mutation does not apply (h5py refuses it)
            return [(label, 0, "skipped", "", f"mutation failed: {e!r}")]
        rows = []
        ranks = nprocs if (i % args.multi_every == 0 or label.startswith(("random:", "file:"))) \
            else nprocs[:1]
        for nproc, cls, cmd, out in run_case(args, case_dir, inp, invalid, kind, label, ranks):
            rows.append((label, nproc, cls, cmd, out))
        if not args.keep and all(r[2] in ("clean-error", "success") for r in rows):
            shutil.rmtree(case_dir, ignore_errors=True)
        return rows

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for rows in ex.map(one, cases):
            for label, nproc, cls, cmd, out in rows:
                camp.record(kind, label, nproc, cls, cmd, out)


# ---- SWC -------------------------------------------------------------------------------------

def swc_rows(text):
    return text.splitlines()


def sample_lines(lines):
    return [i for i, l in enumerate(lines) if l.strip() and not l.lstrip().startswith("#")]


def swc_mutate(lines, rng):
    """One random mutation of the SWC lines; returns (label, new lines)."""
    try:
        return swc_mutate_once(lines, rng)
    except (IndexError, ValueError):  # a line broken by an earlier mutation: break another one
        L = list(lines)
        i = rng.randrange(len(L)) if L else 0
        if L:
            L[i] = "garbage here"
        return "garbage", L


def swc_mutate_once(lines, rng):
    L = list(lines)
    samples = sample_lines(L)
    if not samples:
        return "noop", L
    i = rng.choice(samples)
    f = L[i].split()
    ids = [L[j].split()[0] for j in samples]
    ops = ["cycle", "missing-parent", "dup-id", "nan", "inf", "huge-radius", "neg-radius",
           "zero-radius", "zero-length", "garbage", "long-line", "no-soma", "self-parent",
           "delete-line", "extra-field", "missing-field", "float-id", "huge-id", "neg-type",
           "second-root", "blank-lines", "binary", "huge-coord", "tiny-coord", "dup-line",
           "truncate", "crlf", "tabs", "id-overflow", "parent-overflow", "empty", "only-root",
           "reverse", "shuffle", "huge-type", "hex", "denormal-radius"]
    op = rng.choice(ops)
    if len(f) != 7 and op not in ("garbage", "long-line", "delete-line", "blank-lines", "binary",
                                  "truncate", "crlf", "empty", "reverse", "shuffle", "dup-line"):
        op = "garbage"
    if op == "cycle":
        # make an ancestor point at a descendant: i's parent chain; set parent of i's parent to i
        par = f[6]
        for j in samples:
            g = L[j].split()
            if g[0] == par and g[6] != "-1":
                g[6] = f[0]
                L[j] = " ".join(g)
                break
    elif op == "missing-parent":
        f[6] = str(10**7 + rng.randrange(1000)); L[i] = " ".join(f)
    elif op == "dup-id":
        f[0] = rng.choice(ids); L[i] = " ".join(f)
    elif op == "nan":
        f[rng.randrange(2, 6)] = rng.choice(["nan", "NaN", "-nan"]); L[i] = " ".join(f)
    elif op == "inf":
        f[rng.randrange(2, 6)] = rng.choice(["inf", "-inf", "1e999", "infinity"]); L[i] = " ".join(f)
    elif op == "huge-radius":
        f[5] = rng.choice(["1e300", "1e308", "1.7e308", "1e200", "1e30", "1e10"]); L[i] = " ".join(f)
    elif op == "neg-radius":
        f[5] = "-" + f[5]; L[i] = " ".join(f)
    elif op == "zero-radius":
        for j in samples[: rng.randrange(1, len(samples) + 1)]:
            g = L[j].split(); g[5] = "0"; L[j] = " ".join(g)
    elif op == "zero-length":
        # put every sample at one point
        for j in samples:
            g = L[j].split()
            if len(g) == 7:
                g[2] = g[3] = g[4] = "0"; L[j] = " ".join(g)
    elif op == "garbage":
        L[i] = rng.choice(["abc def", "1 2 3", "\x00\x01\x02", "1 1 0 0 0 1 -1 junk", "#",
                           "- - - - - - -", "1e 1 1 1 1 1 1", "0x10 1 0 0 0 1 -1", "++1 1 0 0 0 1 -1",
                           "1 1 0 0 0 1 --1", " ".join(["9"] * 7) + "a"])
    elif op == "long-line":
        L[i] = L[i] + " " + "#" + "x" * rng.choice([5000, 70000, 300000])
        if rng.random() < 0.5:
            L[i] = "1" * rng.choice([500, 5000, 100000]) + " " + " ".join(f[1:])
    elif op == "no-soma":
        for j in samples:
            g = L[j].split()
            if len(g) == 7 and g[1] == "1":
                g[1] = "3"; L[j] = " ".join(g)
    elif op == "self-parent":
        f[6] = f[0]; L[i] = " ".join(f)
    elif op == "delete-line":
        del L[i]
    elif op == "extra-field":
        L[i] = L[i] + " 7"
    elif op == "missing-field":
        L[i] = " ".join(f[:6])
    elif op == "float-id":
        f[rng.choice([0, 1, 6])] = rng.choice(["2.5", "1e3", "3.0", "nan", "1e400", "-0.0"]); L[i] = " ".join(f)
    elif op == "huge-id":
        f[0] = rng.choice(["9223372036854775807", "-9223372036854775808", "2147483648", "-5"]); L[i] = " ".join(f)
    elif op == "neg-type":
        f[1] = rng.choice(["-1", "-2147483648"]); L[i] = " ".join(f)
    elif op == "huge-type":
        f[1] = rng.choice(["2147483647", "2147483646", "1000000", "99999999999", "65536"]); L[i] = " ".join(f)
    elif op == "second-root":
        f[6] = "-1"; L[i] = " ".join(f)
    elif op == "blank-lines":
        L.insert(i, ""); L.insert(i, "   \t  ")
    elif op == "binary":
        L[i] = "".join(chr(rng.randrange(1, 256)) for _ in range(40))
    elif op == "huge-coord":
        f[rng.randrange(2, 5)] = rng.choice(["1e300", "-1e300", "1e308", "1.7976931348623157e308"]); L[i] = " ".join(f)
    elif op == "tiny-coord":
        f[rng.randrange(2, 6)] = rng.choice(["1e-320", "4.9e-324", "1e-300"]); L[i] = " ".join(f)
    elif op == "denormal-radius":
        f[5] = rng.choice(["1e-320", "4.9e-324", "1e-300", "1e-30"]); L[i] = " ".join(f)
    elif op == "dup-line":
        L.insert(i, L[i])
    elif op == "truncate":
        L = L[: i + 1]
        L[-1] = L[-1][: rng.randrange(len(L[-1]) + 1)]
    elif op == "crlf":
        L = [l + "\r" for l in L]
    elif op == "tabs":
        L[i] = "\t".join(f)
    elif op == "id-overflow":
        f[0] = "99999999999999999999999"; L[i] = " ".join(f)
    elif op == "parent-overflow":
        f[6] = rng.choice(["99999999999999999999999", "-2", "-99999999999"]); L[i] = " ".join(f)
    elif op == "empty":
        L = [l for l in L if l.lstrip().startswith("#")]
    elif op == "only-root":
        L = [L[samples[0]]]
    elif op == "reverse":
        L = L[::-1]
    elif op == "shuffle":
        rng.shuffle(L)
    elif op == "hex":
        f[rng.randrange(2, 6)] = rng.choice(["0x1p3", "0x10", "1e+", "1.2.3", "  "]); L[i] = " ".join(f)
    return op, L


# Mutations that keep the file valid (the rules of docs/morphologies.md), for "accepted-invalid".
SWC_VALID_OPS = {"blank-lines", "crlf", "tabs", "reverse", "shuffle", "tiny-coord", "huge-type",
                 "no-soma", "noop"}
SWC_INVALID_OPS = {"cycle", "missing-parent", "dup-id", "nan", "inf", "neg-radius", "self-parent",
                   "extra-field", "missing-field", "neg-type", "second-root", "id-overflow",
                   "parent-overflow", "empty", "dup-line", "binary", "hex", "huge-id"}


def do_swc(args, camp, rng):
    files = sorted(os.path.join(args.morphologies, x) for x in os.listdir(args.morphologies)
                   if x.endswith(".swc"))
    texts = {p: open(p, encoding="utf-8", errors="replace").read() for p in files}
    cases = []
    for k in range(args.swc_cases):
        src = rng.choice(files)
        lines = swc_rows(texts[src])
        ops = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            op, lines = swc_mutate(lines, rng)
            ops.append(op)
        cases.append((os.path.basename(src), ops, lines))

    def one(i_case):
        i, (src, ops, lines) = i_case
        case_dir = os.path.join(camp.work, "swc", f"c{i:05d}")
        os.makedirs(case_dir, exist_ok=True)
        inp = os.path.join(case_dir, "m.swc")
        with open(inp, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as fh:
            fh.write("\n".join(lines) + "\n")
        outp = os.path.join(case_dir, "out.h5")
        cmd = [prog(args, "simengine-prep"), "neurons", "--swc", inp + ":1", "--tstop", "1", "-o", outp]
        rc, out, to = run(cmd, args.timeout, case_dir)
        invalid = True if any(o in SWC_INVALID_OPS for o in ops) else (
            False if all(o in SWC_VALID_OPS for o in ops) else None)
        cls = classify(rc, out, to, ["m.swc"], invalid, [outp, outp + ".tmp"])
        if rc is not None and rc != 0 and cls == "clean-error" and "line" not in out and "no samples" not in out:
            cls = "unclear-error"
        if rc == 0:  # the file prep wrote must run
            rc2, out2, to2 = run([prog(args, "simengine"), outp, "-o", outp + ".run.h5", "-q"],
                                 args.timeout, case_dir)
            cls2 = classify(rc2, out2, to2, ["out.h5"], False, [])
            if cls2 != "success":
                cls = "prep-ok-run-" + cls2
                out = out + "\n--- simengine on the prepared file ---\n" + out2
        label = f"{src}:{'+'.join(ops)}"
        keep = args.keep or cls not in ("clean-error", "success")
        if not keep:
            shutil.rmtree(case_dir, ignore_errors=True)
        return (label, 1, cls, " ".join(cmd), out[-3000:])

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for label, nproc, cls, cmd, out in ex.map(one, enumerate(cases)):
            camp.record("swc", label, nproc, cls, cmd, out)


# ---- main ------------------------------------------------------------------------------------

def make_seed(args, kind):
    d = os.path.join(args.work, "seeds")
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, f"{kind}.h5")
    if kind == "neurons":
        morph = os.path.join(args.morphologies, "pyramidal.swc")
        cmd = [prog(args, "simengine-prep"), "neurons", "-o", p, "--swc", morph + ":2",
               "--class", "small-low:2", "--iclamp-all", "0.2:0.5:0.5", "--tstop", "1",
               "--record", "all", "--record-cells", "0,2"]
    else:
        cmd = [prog(args, "simengine-prep"), "tdbem", "-o", p, "--n", "40", "--kmax", "20",
               "--dmax", "4", "--mean-length", "3", "--steps", "12"]
    rc, out, _ = run(cmd, 120, d)
    if rc != 0:
        sys.exit(f"fuzz_inputs: making the {kind} seed failed:\n{out}")
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="directory with simengine and simengine-prep")
    ap.add_argument("--kind", default="neurons,swc,tdbem")
    ap.add_argument("--random", type=int, default=100, help="random HDF5 combinations per kind")
    ap.add_argument("--swc-cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--np", default="1,2", help="rank counts for simengine")
    ap.add_argument("--multi-every", type=int, default=4,
                    help="run the single HDF5 mutations on every rank count of --np only for every "
                         "Kth case (the others on the first count; random and file cases always)")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", default="/tmp/fuzz_inputs")
    ap.add_argument("--morphologies", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                          "..", "data", "morphologies"))
    ap.add_argument("--only", default="", help="run only the HDF5 cases whose label contains this")
    ap.add_argument("--start", type=int, default=0,
                    help="skip the first K HDF5 cases of each kind (resume a stopped campaign)")
    ap.add_argument("--every", type=int, default=1,
                    help="run only every Mth HDF5 case from --start on (a sample)")
    ap.add_argument("--keep", action="store_true", help="keep every case's directory")
    args = ap.parse_args()
    camp = Campaign(args)
    for kind in args.kind.split(","):
        rng = random.Random(f"{args.seed}:{kind}")
        if kind in ("neurons", "tdbem"):
            seed_file = make_seed(args, kind)
            if args.only:
                global h5_cases
                orig = h5_cases
                h5_cases = lambda a, s, k, r: [c for c in orig(a, s, k, r) if args.only in c[0]]
            do_h5_kind(args, camp, kind, seed_file, rng)
        elif kind == "swc":
            do_swc(args, camp, rng)
        else:
            sys.exit(f"fuzz_inputs: unknown kind {kind}")
    bad = [r for r in camp.results if r[3] not in ("clean-error", "success", "skipped")]
    with open(os.path.join(args.work, "report.txt"), "w") as fh:
        for kind, label, nproc, cls, cmd, out in camp.results:
            fh.write(f"== {cls} {kind} np={nproc} {label}\n")
            if cls not in ("success", "skipped"):
                fh.write(f"$ {cmd}\n{out.strip()}\n")
    for kind, counts in camp.summary().items():
        total = sum(counts.values())
        print(f"{kind}: {total} runs: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for kind, label, nproc, cls, cmd, out in bad:
        print(f"  {cls}: {kind} np={nproc} {label}")
    print(f"report: {os.path.join(args.work, 'report.txt')}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
