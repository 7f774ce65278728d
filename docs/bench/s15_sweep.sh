#!/bin/bash
# Session 15, fifth device call (about 5 minutes): around session 15's defaults, one knob at a
# time, times the byte floor at 256 000 cells: the big classes with 6 and 7 warps, cut 0, 40 and
# 56 rows per warp in registers; medium-low with 24 and 40 rows and cut 0; medium-high with 40
# and 56 rows; small-low with 2 and 8 warps and its hh rows split off. From the repository root
# on the device (run tool, carry .devkit): bash docs/bench/s15_sweep.sh
source .devkit/env.sh
tools/device/build.sh simengine-bench > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s15_sweep.txt
source docs/bench/gen_step_one.sh
one big-low,big-high
for v in SE_GEN_WARPS=6 SE_GEN_WARPS=7 SE_GEN_WARP_CUT=0 SE_GEN_WARP_REG_ROWS=40 \
  SE_GEN_WARP_REG_ROWS=56; do one big-low,big-high $v; done
one medium-low,medium-high
for v in SE_GEN_WARP_REG_ROWS=24 SE_GEN_WARP_REG_ROWS=40 SE_GEN_WARP_CUT=0; do one medium-low $v; done
for v in SE_GEN_WARP_REG_ROWS=40 SE_GEN_WARP_REG_ROWS=56; do one medium-high $v; done
one small-low
for v in SE_GEN_WARPS=2 SE_GEN_WARPS=8 SE_GEN_WARP_HH=0; do one small-low $v; done
grep -E "^==|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
echo "end at ${SECONDS}s"
