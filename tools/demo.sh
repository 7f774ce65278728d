#!/usr/bin/env bash
# The README's first command: installs the dependencies, builds, prepares the default input from
# morphologies shipped in data/morphologies/, runs it on 2 MPI ranks and prints a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
mkdir -p out
# 200 cells: 40 copies of each of 5 real morphologies, a 0.3 nA step into every soma from 5 ms,
# 100 ms of simulated time, soma voltages recorded every 0.1 ms.
build/src/simengine-prep neurons -o out/default.h5 \
  --swc data/morphologies/96ML.CNG.swc:40 \
  --swc data/morphologies/cell1-8b-CA3.CNG.swc:40 \
  --swc data/morphologies/SM090312A1-5-IDC.CNG.swc:40 \
  --swc data/morphologies/c91662.swc:40 \
  --swc data/morphologies/pyramidal.swc:40 \
  --iclamp-all 5:90:0.3 --tstop 100 --dt 0.025 --record soma --record-every 4
mpirun --oversubscribe -np 2 build/src/simengine out/default.h5 -o out/default.out.h5
python3 - <<'PY'
import h5py, numpy as np
with h5py.File("out/default.out.h5", "r") as f:
    pop = list(f["report"])[0]
    data = f[f"report/{pop}/data"]
    spikes = f[f"spikes/{pop}/timestamps"][:]
    meta = dict(f["simengine"].attrs)
    print(f"output: out/default.out.h5  population '{pop}': {data.shape[1]} recorded soma traces x "
          f"{data.shape[0]} frames, {len(spikes)} spikes, "
          f"{len(np.unique(f[f'spikes/{pop}/node_ids'][:]))} cells fired; run {meta['time_run_s']:.2f} s")
PY
echo "plot: python3 tools/plot_traces.py out/default.out.h5 -o out/traces.png; python3 tools/plot_raster.py out/default.out.h5 -o out/raster.png"
