#!/usr/bin/env bash
# End to end: simengine-prep builds a mixed population (synthetic classes + real SWC files, HH
# somas and axons, passive dendrites, current clamps), simengine runs it on 1, 2 and 3 ranks, in
# the flat and interleaved layouts (widths 8 and 4) and with 1 and 2 threads, and a population
# with fewer cells than ranks. Every output must be identical bit
# for bit in /report and /spikes (h5diff without tolerance; /simengine holds timings and is
# excluded), the population must actually fire, and the files must pass tests/check_output.py.
set -euo pipefail
bin="$SE_BUILD_DIR/src"; src="$SE_SOURCE_DIR"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
run() { "$MPIEXEC" --oversubscribe -n "$1" "$bin/simengine" -q "${@:2}"; }

"$bin/simengine-prep" neurons -o "$work/in.h5" \
  --class small-low:3 --class medium-high:4 --class big-high:2 \
  --swc "$src/data/morphologies/96ML.CNG.swc:3" --swc "$src/data/morphologies/pyramidal.swc:2" \
  --iclamp-all 2:30:0.8 --tstop 40 --dt 0.025 --record all --record-every 2 --record-dtype float64 >/dev/null

run 1 "$work/in.h5" -o "$work/r1.h5"
run 2 "$work/in.h5" -o "$work/r2.h5"
run 3 "$work/in.h5" -o "$work/r3.h5"
run 2 "$work/in.h5" -o "$work/flat.h5" --layout flat
run 1 "$work/in.h5" -o "$work/w4.h5" --width 4 --threads 2
run 3 "$work/in.h5" -o "$work/t1.h5" --threads 1 --buffer-frames 7

# fewer cells than ranks: one rank owns none
"$bin/simengine-prep" neurons -o "$work/two.h5" --class small-high:2 --iclamp-all 1:10:0.5 --tstop 15 >/dev/null
run 1 "$work/two.h5" -o "$work/two1.h5"
run 3 "$work/two.h5" -o "$work/two3.h5"
h5diff --exclude-path /simengine "$work/two1.h5" "$work/two3.h5" >/dev/null || { echo "FAIL: 2 cells on 3 ranks differ from 1 rank"; exit 1; }
echo "ok: 2 cells on 3 ranks identical to 1 rank"

for f in r2 r3 flat w4 t1; do
  if ! h5diff --exclude-path /simengine "$work/r1.h5" "$work/$f.h5" >/dev/null; then
    echo "FAIL: $f.h5 differs from r1.h5:"; h5diff --exclude-path /simengine "$work/r1.h5" "$work/$f.h5" | head -20
    exit 1
  fi
  echo "ok: $f.h5 identical to the 1-rank interleaved run"
done
for f in r1 r3 flat; do
  [ ! -e "$work/$f.h5.tmp" ] || { echo "FAIL: $f.h5.tmp left behind"; exit 1; }
  python3 "$src/tests/check_output.py" "$work/$f.h5"
done
python3 - "$work/r1.h5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    ts = f["spikes/default/timestamps"][:]; ids = f["spikes/default/node_ids"][:]
    data = f["report/default/data"]
    assert data.dtype == np.float64, data.dtype
    assert len(np.unique(ids)) >= 5, f"only {len(np.unique(ids))} cells fired"
    assert np.all(np.isfinite(data[:])), "non-finite voltages"
    print(f"ok: {len(ts)} spikes from {len(np.unique(ids))} of {len(f['report/default/mapping/node_ids'])} cells, data {data.shape}")
PY
echo "1 passed, 0 failed"
