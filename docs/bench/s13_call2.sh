#!/bin/bash
# Session 13's second device call (about 8 minutes): gen with the warp-per-subtree kernels
# (SE_GEN_WARPS) and the hh rows split off (SE_GEN_HH_SPLIT, now the default) on the six classes
# alone and together at 256 000 cells: the default (a thread per cell up to 128 rows, 4 warps up
# to 400, else 8), a thread per cell with split (SE_GEN_WARPS=1), session 12's default (a thread
# per cell, hh rows in the step), 4 and 8 warps for every class; the six on a stream each and
# not; then engine_stream's GPU part (gen against the CPU backend, SE_TEST_GEN_HOST=0).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s13_call2.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s13_warps.txt
C=small-low,small-high,medium-low,medium-high,big-low,big-high
for cfg in SE_GEN_WARPS=-1 SE_GEN_WARPS=1 "SE_GEN_WARPS=1 SE_GEN_HH_SPLIT=0" SE_GEN_WARPS=4 \
           SE_GEN_WARPS=8; do
  echo "== $cfg (at ${SECONDS}s)" >> $S
  env $cfg SE_GEN_VERBOSE=1 timeout 70 build-dev/src/simengine-bench step --classes $C \
    --six 256000 --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
for st in 1 0; do
  echo "== SE_GEN_STREAMS=$st (at ${SECONDS}s)" >> $S
  SE_GEN_STREAMS=$st timeout 30 build-dev/src/simengine-bench step --classes "" --six 256000 \
    --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
grep -E "^==|cuda gen|rror" $S
echo "bench end at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 SE_TEST_GEN_HOST=0
(cd build-dev && timeout 200 ctest -R engine_stream -V) > $OUT/engine_stream.txt 2>&1
grep -E "gen|checks|Passed|Failed|FAIL" $OUT/engine_stream.txt | tail -30
echo "end at ${SECONDS}s"
