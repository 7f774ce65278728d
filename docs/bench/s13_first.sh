#!/bin/bash
# Prepared in session 12 for the next session's first device call (not run yet): every gpu test
# (tools/device/check.sh: engine_stream runs gen with SE_GEN_HH_PREFETCH on a GPU for the first
# time), then gen with each hh row's loads issued one row ahead (SE_GEN_HH_PREFETCH=1) against
# the default on the four classes above 1.5x and on the six classes together, 256 000 cells.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s13_first.sh
source .devkit/env.sh
tools/device/check.sh || echo "check.sh FAILED: see $OUT/gpu_tests.txt"
echo "tests at ${SECONDS}s"
S=$OUT/s13_prefetch.txt
for p in 0 1 1 0; do
  echo "== SE_GEN_HH_PREFETCH=$p (at ${SECONDS}s)" >> $S
  SE_GEN_HH_PREFETCH=$p timeout 40 build-dev/src/simengine-bench step \
    --classes small-low,medium-low,big-low,big-high --six 256000 --neurons 256000 --steps 10 \
    --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
grep -E "^==|gen|rror" $S
echo "end at ${SECONDS}s"
