#!/bin/bash
# Prepared in session 13 for the next session's second device call (about 8-9 minutes): gen's
# warp partitions at 256 000 cells on medium-low, big-low, big-high and the six together
# (SE_GEN_WARP_CUT 0 and 1 at 4, 6 and 8 warps per 32 cells,
# docs/gpu.md "What is left": the trunk runs alone in warp 0; cut 1 shortens it, e.g. big-low at
# K = 8 from 103 to 56 rows; and registers for 2 blocks per multiprocessor,
# SE_GEN_WARP_MIN_BLOCKS=2, at 6 and 8 warps), then the hh rows computed by the warps
# (SE_GEN_WARP_HH=1) on all six classes at 2 and 4 warps; times the byte floor. The knobs are
# session 13's, written after its last device call. Then docs/bench/s14_third.sh.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s14_second.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s14_cut.txt
for cfg in "0 4 0" "1 4 0" "1 6 0" "0 8 0" "1 8 0" "1 6 2" "1 8 2"; do
  set -- $cfg # the partition, the warps, the blocks per multiprocessor for the registers
  echo "== SE_GEN_WARP_CUT=$1 SE_GEN_WARPS=$2 SE_GEN_WARP_MIN_BLOCKS=$3 (at ${SECONDS}s)" >> $S
  SE_GEN_WARP_CUT=$1 SE_GEN_WARPS=$2 SE_GEN_WARP_MIN_BLOCKS=$3 SE_GEN_VERBOSE=1 timeout 50 \
    build-dev/src/simengine-bench step --classes medium-low,big-low,big-high \
    --six 256000 --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
# the hh rows computed by the warps of the step kernel (SE_GEN_WARP_HH=1, no currents kernel)
# on all six classes, 2 and 4 warps, against the same warps with the hh rows split off
C6=small-low,small-high,medium-low,medium-high,big-low,big-high
for cfg in "1 2" "0 2" "1 4"; do
  set -- $cfg
  echo "== SE_GEN_WARP_HH=$1 SE_GEN_WARPS=$2 (at ${SECONDS}s)" >> $S
  SE_GEN_WARP_HH=$1 SE_GEN_WARPS=$2 SE_GEN_VERBOSE=1 timeout 60 build-dev/src/simengine-bench \
    step --classes $C6 --six 256000 --neurons 256000 --steps 10 --cpu 0 --mixed 0 \
    --huge-swc "" --only gen >> $S 2>&1
done
grep -E "^==|cuda gen|rror" $S
echo "end at ${SECONDS}s"
