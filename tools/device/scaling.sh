#!/bin/bash
# Strong and weak scaling of the neurons engine over the GPUs of one host (issue 3), as recorded
# in docs/performance.md. Run on the GPU machine from the repository root after building into
# build-dev (tools/device/README.md). Usage: tools/device/scaling.sh MAX_GPUS [KERNEL]
# Populations: the six classes of paper 000 mixed in equal numbers, K cells per class:
# 1 000 002 cells for strong scaling, 250 002 per GPU for weak scaling; TSTOP ms (default 25:
# 1000 steps), each rank with nproc / MAX_GPUS OpenMP threads.
set -euo pipefail
max=${1:?usage: scaling.sh MAX_GPUS [KERNEL]}
kernel=${2:-fused2}
export OMP_NUM_THREADS=$(( $(nproc) / max ))
bin=build-dev/src
tmp=${TMPDIR:-/tmp}/se_scaling
mkdir -p "$tmp"
prep() { # prep FILE K
  local args=()
  for c in small-low small-high medium-low medium-high big-low big-high; do args+=(--class "$c:$2"); done
  "$bin/simengine-prep" neurons -o "$1" "${args[@]}" --iclamp-all 0.5:10:0.5 --tstop "${TSTOP:-25}" \
    --record soma --record-every 20 >/dev/null
}
run() { # run RANKS FILE: one GPU per rank
  echo "== $1 rank(s) x 1 GPU, $(basename "$2")"
  mpirun -x LD_LIBRARY_PATH --bind-to none -np "$1" "$bin/simengine" "$2" --gpu-kernel "$kernel" \
    --gpus 1 -o "$tmp/out.h5" | grep -E 'cells|done in'
}
prep "$tmp/full.h5" 166667
run 1 "$tmp/full.h5"
for g in 2 4 8; do
  [ "$g" -le "$max" ] || break
  run "$g" "$tmp/full.h5"
done
for g in 1 2 4 8; do
  [ "$g" -le "$max" ] || break
  prep "$tmp/weak_$g.h5" $((41667 * g))
  run "$g" "$tmp/weak_$g.h5"
done
