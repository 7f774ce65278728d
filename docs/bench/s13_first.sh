#!/bin/bash
# Prepared in session 12 for the next session's first device call (not run yet): every gpu test
# (tools/device/check.sh: engine_stream runs gen with SE_GEN_HH_BATCH on a GPU for the first
# time), then gen's hh loop with 1, 2, 4 and 8 rows per iteration, all their loads first
# (SE_GEN_HH_BATCH), on the four classes above 1.5x and the six classes together, 256 000 cells;
# 1 again at the end (cross-run spread).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s13_first.sh
source .devkit/env.sh
tools/device/check.sh || echo "check.sh FAILED: see $OUT/gpu_tests.txt"
echo "tests at ${SECONDS}s"
S=$OUT/s13_hh_batch.txt
for b in 1 2 4 8 1; do
  echo "== SE_GEN_HH_BATCH=$b (at ${SECONDS}s)" >> $S
  SE_GEN_HH_BATCH=$b timeout 40 build-dev/src/simengine-bench step \
    --classes small-low,medium-low,big-low,big-high --six 256000 --neurons 256000 --steps 10 \
    --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
grep -E "^==|gen|rror" $S
echo "end at ${SECONDS}s"
