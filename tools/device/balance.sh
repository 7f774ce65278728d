#!/usr/bin/env bash
# Balanced CPU + GPU workers on one GPU machine (docs/balance.md, "Measured"). Run from the
# repository root after building (build-dev by default):
#   source .devkit/env.sh
#   tools/device/build.sh simengine simengine-prep compare_outputs test_neurons_state
#   OUT=/some/dir bash tools/device/balance.sh [BUILD_DIR]
# It checks the state moves with a CUDA engine (test_neurons_state gpu), prepares a mixed
# population (~2.8 M compartments), runs it on 1 rank with the GPU alone, the CPU alone, and the
# CPU worker + the GPU unbalanced (--balance off: equal compartments), with the paper's update and
# with the rate update (100 steps per iteration, rollback after 20), prints the per-iteration
# lines, compares every output with the GPU-only one (compare_outputs: 1e-6 mV, 1e-6 ms) and
# leaves the logs and the balanced outputs (with /simengine/balance) in $OUT.
set -euo pipefail
build=${1:-build-dev}
bin="$build/src"
out=${OUT:-$(mktemp -d)}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
threads=${OMP_NUM_THREADS:-$(nproc)}
export OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=passive
run() { mpirun -x LD_LIBRARY_PATH -x OMP_NUM_THREADS -x OMP_WAIT_POLICY --bind-to none -np 1 \
          "$bin/simengine" "$@"; }

echo "== state moves with CUDA engines"
"$build/tests/test_neurons_state" gpu

echo "== input"
"$bin/simengine-prep" neurons -o "$work/in.h5" --class medium-high:6000 --class small-high:6000 \
  --class big-high:600 --iclamp-all 1:60:0.5 --tstop 62.5 --record soma --record-every 40 | tail -4

for case in gpu cpu off paper rate; do
  echo "== $case"
  case $case in
    gpu) run "$work/in.h5" -o "$work/gpu.h5" --gpus 1 ;;
    cpu) run "$work/in.h5" -o "$work/cpu.h5" --gpus 0 ;;
    off) run "$work/in.h5" -o "$work/off.h5" --gpus 1 --cpu-worker on --balance off \
           --balance-steps 100 ;;
    *) run "$work/in.h5" -o "$work/$case.h5" --gpus 1 --cpu-worker on --balance "$case" \
         --balance-steps 100 --balance-iterations 20 ;;
  esac 2>&1 | tee "$out/run_$case.txt"
done
echo "== agreement with the GPU-only run"
for case in cpu off paper rate; do
  printf '%s: ' "$case"
  "$build/tests/compare_outputs" "$work/gpu.h5" "$work/$case.h5" 1e-6 1e-6 || echo "FAIL: $case"
done
cp "$work/paper.h5" "$work/rate.h5" "$out/"
echo "outputs in $out"
