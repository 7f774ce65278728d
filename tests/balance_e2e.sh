#!/usr/bin/env bash
# Balanced workers end to end (docs/balance.md): simengine with 3 CPU workers per rank
# (--cpu-workers 3) and short iterations (--balance-steps 40), on 2 and 3 ranks, with --balance
# off, paper and rate. The balancer moves cells between the workers after nearly every
# iteration (the times are noisy), yet every output must be identical bit for bit to the plain
# 1-worker run in /report and /spikes (h5diff without tolerance; /simengine holds timings and the
# history and is excluded). /simengine/balance is checked with h5py: its shape, that the workers'
# intervals tile each rank's cells in every iteration, that cells moved (the CPU workers are
# about equally fast, so whether a given run moves depends on timing noise: at least one of the
# four balanced runs must), that they never moved without balancing, the attributes.
# Also: bad option values exit 2 with a message.
set -euo pipefail
bin="$SE_BUILD_DIR/src"; src="$SE_SOURCE_DIR"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
run() { "$MPIEXEC" --oversubscribe -n "$1" "$bin/simengine" -q "${@:2}"; }

"$bin/simengine-prep" neurons -o "$work/in.h5" \
  --class small-low:4 --class medium-high:4 --class big-high:2 \
  --swc "$src/data/morphologies/96ML.CNG.swc:3" --swc "$src/data/morphologies/pyramidal.swc:3" \
  --iclamp-all 2:30:0.8 --tstop 30 --dt 0.025 --record all --record-every 3 --record-dtype float64 >/dev/null

run 1 "$work/in.h5" -o "$work/plain.h5"
for ranks in 2 3; do
  for method in off paper rate; do
    out="$work/r${ranks}_$method.h5"
    run "$ranks" "$work/in.h5" -o "$out" --cpu-workers 3 --balance "$method" --balance-steps 40 \
      --balance-iterations 12
    if ! h5diff --exclude-path /simengine "$work/plain.h5" "$out" >/dev/null; then
      echo "FAIL: $ranks ranks, --balance $method differs from the plain run:"
      h5diff --exclude-path /simengine "$work/plain.h5" "$out" | head -20
      exit 1
    fi
    echo "ok: $ranks ranks x 3 CPU workers, --balance $method: identical to the plain run"
  done
done
# a rank with fewer cells than workers, and iterations that do not divide the run
"$bin/simengine-prep" neurons -o "$work/two.h5" --class small-high:2 --iclamp-all 1:10:0.5 --tstop 15 >/dev/null
run 1 "$work/two.h5" -o "$work/two1.h5"
run 3 "$work/two.h5" -o "$work/two3.h5" --cpu-workers 4 --balance rate --balance-steps 7
h5diff --exclude-path /simengine "$work/two1.h5" "$work/two3.h5" >/dev/null \
  || { echo "FAIL: 2 cells on 3 ranks x 4 workers differ from 1 rank"; exit 1; }
echo "ok: 2 cells on 3 ranks x 4 CPU workers identical to 1 rank"

python3 - "$work" <<'PY'
import sys, h5py, numpy as np
work = sys.argv[1]
balanced_moves = 0
for ranks in (2, 3):
    for method in ("off", "paper", "rate"):
        path = f"{work}/r{ranks}_{method}.h5"
        with h5py.File(path, "r") as f:
            g = f["/simengine/balance"]
            first, last, time = g["first"][()], g["last"][()], g["time"][()]
            names = [n.decode() for n in g["workers"][()]]
            assert g.attrs["items"] == "cells" and g.attrs["method"] == method, dict(g.attrs)
            assert g.attrs["steps_per_iteration"] == 40, dict(g.attrs)
            steps = int(f["/simengine"].attrs["steps"])
            iters, r, w = first.shape
            assert (iters, r, w) == (steps // 40, ranks, 3), (first.shape, steps)
            assert names == ["cpu:0,cpu:1,cpu:2"] * ranks, names
            moved = 0
            for k in range(ranks):
                n = last[0, k, -1] + 1
                for i in range(iters):
                    # the intervals tile the rank's cells in worker order, one cell at least each
                    assert first[i, k, 0] == 0 and last[i, k, -1] == n - 1, (path, i, k)
                    assert np.all(first[i, k, 1:] == last[i, k, :-1] + 1), (path, i, k)
                    assert np.all(last[i, k] >= first[i, k]), (path, i, k)
                    assert np.all(np.isfinite(time[i, k])) and np.all(time[i, k] >= 0), (path, i, k)
                moved += int(np.any(first[1:, k] != first[:-1, k], axis=1).sum())
            if method == "off":
                assert moved == 0, f"{path}: intervals changed without balancing"
            else:
                balanced_moves += moved
            print(f"ok: {path.split('/')[-1]}: history {first.shape}, {moved} moves")
assert balanced_moves > 0, "no balanced run moved a cell"
with h5py.File(f"{work}/two3.h5", "r") as f:
    g = f["/simengine/balance"]
    names = [n.decode() for n in g["workers"][()]]
    # 2 cells on 3 ranks: ranks with one cell keep one worker, the rank without cells one too
    assert g["first"].shape[1:] == (3, 1), g["first"].shape
    assert names == ["cpu"] * 3, names
    assert g["first"].shape[0] == 600 // 7, g["first"].shape
    print(f"ok: two3.h5: history {g['first'].shape}, workers {names}")
PY

# bad values: exit 2 and a message naming the option
for bad in "--balance fast" "--balance-steps 0" "--cpu-workers 17" "--cpu-worker maybe" \
           "--balance-iterations -3"; do
  set +e
  msg=$(run 1 "$work/in.h5" -o "$work/bad.h5" $bad 2>&1); code=$?
  set -e
  opt=${bad%% *}
  [ "$code" = 2 ] || { echo "FAIL: '$bad' exited $code: $msg"; exit 1; }
  echo "$msg" | grep -q -- "$opt" || { echo "FAIL: '$bad': message does not name $opt: $msg"; exit 1; }
  echo "ok: '$bad' refused: $(echo "$msg" | grep -m1 'simengine:' | cut -c1-110)"
done
echo "1 passed, 0 failed"
