#!/bin/bash
# Session 19's third device call (about 4 minutes; 7 minutes of device time were left): builds
# simengine-bench only, then gen's step at 256 000 cells around the new defaults (scaled rows,
# FMA, the fold), whose instruction counts moved: big-low's row weight W (SE_GEN_WARP_COST, 5 by
# default above 512 rows), its levels and register rows; medium-low's prefetch distance (8 by
# default for long sections), weights and register rows; the defaults first, in the middle and
# last. From the repository root on the device (run tool, carry .devkit):
# bash docs/bench/s19_sweep.sh
source .devkit/env.sh
tools/device/build.sh simengine-bench > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s19_sweep.txt
source docs/bench/gen_step_one.sh
g() { [ $SECONDS -lt 200 ] && one "$@"; }
g big-low,medium-low
g big-low SE_GEN_WARP_COST=3
g big-low SE_GEN_WARP_COST=4
g big-low SE_GEN_WARP_COST=6
g big-low SE_GEN_WARP_LEVELS=1
g big-low SE_GEN_WARP_REG_ROWS=32
g big-low SE_GEN_WARP_REG_ROWS=64
g big-low,medium-low
g medium-low SE_GEN_PREFETCH=0
g medium-low SE_GEN_PREFETCH=4
g medium-low SE_GEN_PREFETCH=16
g medium-low SE_GEN_WARP_COST=3
g medium-low SE_GEN_WARP_REG_ROWS=48
g medium-low SE_GEN_WARP_LEVELS=1
g big-low,medium-low
grep -E "^==|copy|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
echo "end at ${SECONDS}s"
