#!/usr/bin/env bash
# GPU agreement (issue 3): the CUDA backend, fused, three-kernel and streaming (fused2), against
# the CPU path over a 100 ms HH run of a mixed population: the six synthetic classes and every
# real morphology of data/morphologies, all compartments recorded in float64. Voltages within
# 1e-6 mV, identical spike counts, spike times within 1e-6 ms. fused2 also runs with its other
# code paths forced (docs/gpu.md: y spilled to global memory below the last 5 rows, accumulators
# in global memory, two chunks of loads ahead, no L2 hints). Skips (77) without a GPU.
# SE_E2E_GPU_RUNS (optional) picks a subset of the GPU runs by name (default: all of them).
# The CPU reference runs beside the GPU runs, and each comparison as soon as its run is done.
set -euo pipefail
bin="$SE_BUILD_DIR/src"; src="$SE_SOURCE_DIR"
if ! "$bin/simengine" --version | grep -q "CUDA devices visible: [1-9]"; then
  echo "skipped: no GPU"; exit 77
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
args=()
for f in "$src"/data/morphologies/*.swc; do args+=(--swc "$f:3"); done
for c in small-low small-high medium-low medium-high big-low big-high; do args+=(--class "$c:40"); done
"$bin/simengine-prep" neurons -o "$work/in.h5" "${args[@]}" --iclamp-all 5:90:0.5 --tstop 100 \
  --record all --record-dtype float64 --record-every 4 | tail -3
run() { "$MPIEXEC" --oversubscribe -n "$1" "$bin/simengine" -q "${@:2}"; }
gpu_run() {
  local out="$work/$1.h5"
  case "$1" in
    fused) run 1 "$work/in.h5" -o "$out" --gpus 1 ;;
    phases) run 1 "$work/in.h5" -o "$out" --gpus 1 --gpu-kernel phases ;;
    fused8) run 1 "$work/in.h5" -o "$out" --gpus 1 --width 8 ;;
    fused2r) run 2 "$work/in.h5" -o "$out" --gpus 1 ;;
    stream) run 1 "$work/in.h5" -o "$out" --gpus 1 --gpu-kernel fused2 ;;
    stream8) run 1 "$work/in.h5" -o "$out" --gpus 1 --gpu-kernel fused2 --width 8 ;;
    stream2r) run 2 "$work/in.h5" -o "$out" --gpus 1 --gpu-kernel fused2 ;;
    streamg) SE_STREAM_ROWS=5 SE_STREAM_ACC=rhs SE_STREAM_AHEAD=2 SE_STREAM_HINTS=0 \
               run 1 "$work/in.h5" -o "$out" --gpus 1 --gpu-kernel fused2 ;;
    *) echo "unknown GPU run '$1'"; return 1 ;;
  esac
}
runs=${SE_E2E_GPU_RUNS:-fused phases fused8 fused2r stream stream8 stream2r streamg}
run 1 "$work/in.h5" -o "$work/cpu.h5" --gpus 0 &
cpu=$!
declare -A cmp=()
cpu_done=0
for f in $runs; do
  gpu_run "$f"
  if [ "$cpu_done" -eq 0 ]; then wait "$cpu"; cpu_done=1; fi
  ( "$SE_BUILD_DIR/tests/compare_outputs" "$work/cpu.h5" "$work/$f.h5" 1e-6 1e-6 > "$work/$f.txt" 2>&1
    rc=$?; rm -f "$work/$f.h5"; exit $rc ) &
  cmp[$f]=$!
done
if [ "$cpu_done" -eq 0 ]; then wait "$cpu"; fi
pass=0; fail=0
for f in $runs; do
  if wait "${cmp[$f]}"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAILED: $f"; fi
  sed "s/^/$f: /" "$work/$f.txt"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
