#!/bin/bash
# Balancing histories for the plots of docs/performance.md (issue 5): one neurons run (the input
# of tools/device/balance.sh) and one tdbem run (a sphere of 4000 unknowns), each with the
# paper's update and the rate-based one, a CPU worker and one GPU. Writes the outputs (with
# /simengine/balance) and the logs into $OUT; plot them with
#   tools/plot_balance.py OUT.h5 -o balance.png
# Run from the repository root on the GPU machine after building build-dev.
set -euo pipefail
bin=build-dev/src
out=${OUT:?set OUT}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
run() { mpirun -x LD_LIBRARY_PATH --bind-to none -np 1 "$bin/simengine" "$@"; }
"$bin/simengine-prep" neurons -o "$work/neurons.h5" --class medium-high:6000 \
  --class small-high:6000 --class big-high:600 --iclamp-all 1:60:0.5 --tstop 62.5 --record soma \
  --record-every 40 >/dev/null
"$bin/simengine-prep" tdbem --n 4000 --kmax 100 --steps 200 --precision single \
  -o "$work/tdbem.h5" >/dev/null
for m in paper rate; do
  run "$work/neurons.h5" -o "$out/neurons_$m.h5" --gpus 1 --cpu-worker on --balance "$m" \
    --balance-steps 100 --balance-iterations 20 | grep -E "iteration|balance|done" | tee "$out/neurons_$m.txt"
  run "$work/tdbem.h5" -o "$out/tdbem_$m.h5" --ng 8 --gpus 1 --balance "$m" \
    --balance-iterations 10 | grep -E "iteration|times" | tee "$out/tdbem_$m.txt"
done
