#!/usr/bin/env bash
# GPU agreement (issue 3): the CUDA backend, fused and three-kernel, against the CPU path over a
# 100 ms HH run of a mixed population: the six synthetic classes and every real morphology of
# data/morphologies, all compartments recorded in float64. Voltages within 1e-6 mV, identical
# spike counts, spike times within 1e-6 ms. Skips (77) without a GPU.
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
run 1 "$work/in.h5" -o "$work/cpu.h5" --gpus 0
run 1 "$work/in.h5" -o "$work/fused.h5" --gpus 1
run 1 "$work/in.h5" -o "$work/phases.h5" --gpus 1 --gpu-kernel phases
run 1 "$work/in.h5" -o "$work/fused8.h5" --gpus 1 --width 8
run 2 "$work/in.h5" -o "$work/fused2r.h5" --gpus 1
pass=0; fail=0
for f in fused phases fused8 fused2r; do
  if "$SE_BUILD_DIR/tests/compare_outputs" "$work/cpu.h5" "$work/$f.h5" 1e-6 1e-6; then pass=$((pass+1)); else fail=$((fail+1)); fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
