#!/usr/bin/env bash
# GPU agreement (issue 3): the CUDA backend (fused, three-kernel, streaming fused2, coop, branch
# with EDD for huge cells, auto) against the CPU path over 100 ms HH runs, all compartments
# recorded in float64: voltages within 1e-6 mV, identical spike counts, spike times within 1e-6 ms.
# Inputs:
#   mix:      the six synthetic classes (40 cells each) and every real morphology of
#             data/morphologies (3 cells each);
#   distinct: every cell its own shape (each SWC once, four seeds of each class);
#   huge:     EC2-609291-4 and c91662 refined to 1 um compartments (43 520 and 15 422: through
#             EDD), with a small cell beside them (through the branch plan);
#   mono-*:   one morphology per population for the generated kernel (gen): 100 cells of
#             small-low (one clamp at the soma of every cell, one more on compartment 10 of cell
#             3: their currents in registers), of medium-high (the same), and 64 copies of
#             96ML.CNG.swc;
#   classes:  the six synthetic classes, 40 cells each, for gen with several morphologies (a
#             kernel per morphology over its group table), the same clamps.
# fused2 also runs with its other code paths forced (docs/gpu.md: y spilled to global memory
# below the last 5 rows, accumulators in global memory, two chunks of loads ahead, no L2 hints);
# coop runs at widths 32 and 8 and on two ranks; branch also with EDD for every cell of 300+
# compartments. Skips (77) without a GPU.
# SE_E2E_GPU_RUNS (optional) picks a subset of the GPU runs by name (default: all of them).
# Each input's CPU reference runs beside the GPU runs (SE_E2E_GPU_JOBS at a time, default 1: more
# slow the other gpu tests), and each comparison as soon as its run and its reference are
# done.
set -euo pipefail
bin="$SE_BUILD_DIR/src"; src="$SE_SOURCE_DIR"
if ! "$bin/simengine" --version | grep -q "CUDA devices visible: [1-9]"; then
  echo "skipped: no GPU"; exit 77
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
M="$src/data/morphologies"
prep() { "$bin/simengine-prep" neurons -o "$work/$1.h5" "${@:2}" --tstop 100 --record all \
           --record-dtype float64 | tail -2; }
run() { "$MPIEXEC" --oversubscribe -n "$1" "$bin/simengine" -q "${@:2}"; }
input_of() {
  case "$1" in
    distinct*) echo distinct ;; huge*) echo huge ;; gen-classes) echo classes ;;
    gen-*) echo "mono-${1#gen-}" ;; *) echo mix ;;
  esac
}
gpu_run() {
  local out="$work/$1.h5" in="$work/$(input_of "$1").h5"
  case "$1" in
    fused) run 1 "$in" -o "$out" --gpus 1 --gpu-kernel fused ;;
    phases) run 1 "$in" -o "$out" --gpus 1 --gpu-kernel phases ;;
    fused8) run 1 "$in" -o "$out" --gpus 1 --gpu-kernel fused --width 8 ;;
    fused2r) run 2 "$in" -o "$out" --gpus 1 --gpu-kernel fused ;;
    stream) run 1 "$in" -o "$out" --gpus 1 --gpu-kernel fused2 ;;
    stream8) run 1 "$in" -o "$out" --gpus 1 --gpu-kernel fused2 --width 8 ;;
    stream2r) run 2 "$in" -o "$out" --gpus 1 --gpu-kernel fused2 ;;
    streamg) SE_STREAM_ROWS=5 SE_STREAM_ACC=rhs SE_STREAM_AHEAD=2 SE_STREAM_HINTS=0 \
               run 1 "$in" -o "$out" --gpus 1 --gpu-kernel fused2 ;;
    coop) SE_COOP_VERBOSE=1 run 1 "$in" -o "$out" --gpus 1 --gpu-kernel coop 2>&1 | tail -3 ;;
    coop8) run 1 "$in" -o "$out" --gpus 1 --gpu-kernel coop --width 8 ;;
    coop2r) run 2 "$in" -o "$out" --gpus 1 --gpu-kernel coop ;;
    branch) run 1 "$in" -o "$out" --gpus 1 --gpu-kernel branch ;;
    branch2r) run 2 "$in" -o "$out" --gpus 1 --gpu-kernel branch ;;
    branchedd) SE_EDD_MIN_COMP=300 run 1 "$in" -o "$out" --gpus 1 --gpu-kernel branch ;;
    distinct) SE_BRANCH_VERBOSE=1 run 1 "$in" -o "$out" --gpus 1 --gpu-kernel auto ;;
    huge) SE_BRANCH_VERBOSE=1 run 1 "$in" -o "$out" --gpus 1 --gpu-kernel auto ;;
    gen-*) SE_GEN_VERBOSE=1 run 1 "$in" -o "$out" --gpus 1 --gpu-kernel gen 2>&1 | tail -2 ;;
    *) echo "unknown GPU run '$1'"; return 1 ;;
  esac
}
runs=${SE_E2E_GPU_RUNS:-fused phases fused8 fused2r stream stream8 stream2r streamg coop coop8 coop2r branch branch2r branchedd distinct huge gen-small-low gen-medium-high gen-swc gen-classes}
declare -A need=() cpu=()
for f in $runs; do need[$(input_of "$f")]=1; done
args=()
for f in "$M"/*.swc; do args+=(--swc "$f:3"); done
for c in small-low small-high medium-low medium-high big-low big-high; do args+=(--class "$c:40"); done
[ -z "${need[mix]:-}" ] || prep mix "${args[@]}" --iclamp-all 5:90:0.5 --record-every 4
args=()
for f in "$M"/*.swc; do args+=(--swc "$f:1"); done
for k in 1 2 3 4; do
  for c in small-low small-high medium-low medium-high big-low big-high; do args+=(--class "$c:1"); done
done
[ -z "${need[distinct]:-}" ] || prep distinct "${args[@]}" --seed 7 --iclamp-all 5:90:0.5 --record-every 4
[ -z "${need[huge]:-}" ] || prep huge --swc "$M/EC2-609291-4.CNG.swc" --swc "$M/c91662.swc" \
  --class small-low:1 --max-length 1 --iclamp-all 5:90:0.5 --iclamp 0:0:5:90:8 \
  --iclamp 1:0:5:90:3 --record-every 40
for i in "${!need[@]}"; do
  case "$i" in
    mono-swc) prep "$i" --swc "$M/96ML.CNG.swc:64" --iclamp-all 5:90:0.5 --record-every 4 ;;
    classes) prep "$i" --class small-low:40 --class small-high:40 --class medium-low:40 \
               --class medium-high:40 --class big-low:40 --class big-high:40 \
               --iclamp-all 5:90:0.5 --iclamp 3:10:20:30:0.3 --record-every 4 ;;
    mono-*) prep "$i" --class "${i#mono-}:100" --iclamp-all 5:90:0.5 --iclamp 3:10:20:30:0.3 \
              --record-every 4 ;;
  esac
done
# the CPU references in the background, each leaving its exit status in cpu_<input>.rc
for i in "${!need[@]}"; do
  ( rc=0; run 1 "$work/$i.h5" -o "$work/cpu_$i.h5" --gpus 0 > "$work/cpu_$i.log" 2>&1 || rc=$?
    echo "$rc" > "$work/cpu_$i.rc" ) &
done
# GPU run f (f.ran once it is over), then its comparison once its CPU reference is done; the log
# in f.txt, the exit status in f.rc
one() {
  local f=$1 i rc=0
  i=$(input_of "$f")
  gpu_run "$f" > "$work/$f.txt" 2>&1 || rc=$?
  touch "$work/$f.ran"
  [ "$rc" -eq 0 ] || echo "GPU run failed (exit status $rc)" >> "$work/$f.txt"
  while [ "$rc" -eq 0 ] && [ ! -e "$work/cpu_$i.rc" ]; do sleep 1; done
  if [ "$rc" -eq 0 ] && [ "$(cat "$work/cpu_$i.rc")" != 0 ]; then
    rc=1; { echo "CPU reference failed:"; cat "$work/cpu_$i.log"; } >> "$work/$f.txt"
  fi
  [ "$rc" -ne 0 ] || "$SE_BUILD_DIR/tests/compare_outputs" "$work/cpu_$i.h5" "$work/$f.h5" 1e-6 \
    1e-6 >> "$work/$f.txt" 2>&1 || rc=$?
  rm -f "$work/$f.h5"
  echo "$rc" > "$work/$f.rc"
}
# SE_E2E_GPU_JOBS GPU runs at a time (default 1), the CPU references and comparisons beside them
started=()
gpu_runs_on() {
  local c=0 g
  for g in "${started[@]}"; do [ -e "$work/$g.ran" ] || c=$((c+1)); done
  echo "$c"
}
for f in $runs; do
  while [ "$(gpu_runs_on)" -ge "${SE_E2E_GPU_JOBS:-1}" ]; do sleep 0.2; done
  started+=("$f")
  one "$f" &
done
wait
pass=0; fail=0
for f in $runs; do
  if [ "$(cat "$work/$f.rc" 2>/dev/null)" = 0 ]; then
    pass=$((pass+1))
  else
    fail=$((fail+1)); echo "FAILED: $f"
  fi
  sed "s/^/$f: /" "$work/$f.txt"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
