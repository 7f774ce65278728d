#!/bin/bash
# Prepared in session 12 for the next session's first device call (not run yet; about 4
# minutes): gen's hh rows, two untested ways to hide their latency, on the classes above 1.5x
# and the six classes together, 256 000 cells: the hh loop with 1, 2, 4 and 8 rows per
# iteration, all their loads first (SE_GEN_HH_BATCH), and the hh rows in a kernel of their own at
# full occupancy (SE_GEN_HH_SPLIT=1: b and dg through the rhs and diag slots); the default again
# at the end (cross-run spread); then the six classes' kernels on a stream each (SE_GEN_STREAMS=1)
# and not. The next call: tools/device/check.sh (every gpu test; it runs
# gen with SE_GEN_HH_BATCH, SE_GEN_HH_SPLIT and SE_GEN_STREAMS on a GPU for the first time:
# engine_stream).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s13_first.sh
source .devkit/env.sh
tools/device/build.sh simengine-bench || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s13_hh.txt
for cfg in SE_GEN_HH_BATCH=1 SE_GEN_HH_BATCH=2 SE_GEN_HH_BATCH=4 SE_GEN_HH_BATCH=8 \
           SE_GEN_HH_SPLIT=1 SE_GEN_HH_BATCH=1; do
  echo "== $cfg (at ${SECONDS}s)" >> $S
  env $cfg SE_GEN_VERBOSE=1 timeout 45 build-dev/src/simengine-bench step \
    --classes small-low,medium-low,big-low,big-high --six 256000 --neurons 256000 --steps 10 \
    --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
for st in 1 0; do # the six classes' kernels on a stream each (SE_GEN_STREAMS), then not
  echo "== SE_GEN_STREAMS=$st (at ${SECONDS}s)" >> $S
  SE_GEN_STREAMS=$st timeout 30 build-dev/src/simengine-bench step --classes "" --six 256000 \
    --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
grep -E "^==|cuda gen|rror" $S
echo "end at ${SECONDS}s"
