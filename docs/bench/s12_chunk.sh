#!/bin/bash
# Second device call of session 12: gen with its hh rows computed in chunks just before their
# elimination (SE_GEN_HH_CHUNK 0 = all first, the default, then 8, 16, 32: less shared memory per
# block, more blocks per multiprocessor) on the four classes furthest from the 1.5x target at
# 256 000 cells; then every gpu test (tools/device/check.sh; auto now takes gen for up to 16
# morphologies).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s12_chunk.sh
source .devkit/env.sh
tools/device/build.sh || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s12_chunk.txt
for c in 0 8 16 32; do
  echo "== SE_GEN_HH_CHUNK=$c (at ${SECONDS}s)" >> $S
  SE_GEN_HH_CHUNK=$c SE_GEN_VERBOSE=1 timeout 40 build-dev/src/simengine-bench step \
    --classes small-low,medium-low,big-low,big-high --neurons 256000 --steps 10 --cpu 0 \
    --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
grep -E "^==|gen|rror" $S
echo "bench at ${SECONDS}s"
tools/device/check.sh || echo "check.sh FAILED: see $OUT/gpu_tests.txt"
echo "end at ${SECONDS}s"
