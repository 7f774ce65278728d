#!/bin/bash
# Prepared in session 16 for the next session (about 3 minutes): gen's partition with the rows
# weighted by their cost (SE_GEN_WARP_COST=W: a row with an hh row in its subtree, which divides
# every step, as W passive rows; docs/gpu.md "Session 16" item 10; host-run in CI, not yet
# measured). Offline (tools/gen_phases.py), big-low's two-level critical path at W = 3 is 2853
# instructions against the one-level default's 3886, with 36 B of spills (the default's guard
# would drop it, so SE_GEN_WARP_LEVELS=2 forces it). The defaults, then big-low and big-high
# with 2 levels forced at W = 3 and 2, then the medium classes at W = 2 and 3, times the byte
# floor at 256 000 cells. From the repository root on the device (run tool, carry .devkit):
# bash docs/bench/s17_cost.sh
# (SE_BENCH_BUILT=1: build-dev's simengine-bench is this tree's already, as in s17_hh.sh.)
source .devkit/env.sh
if [ -z "${SE_BENCH_BUILT:-}" ]; then
  tools/device/build.sh simengine-bench > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
  echo "built at ${SECONDS}s"
fi
S=$OUT/s17_cost.txt
source docs/bench/gen_step_one.sh
one big-low,big-high
one big-low,big-high SE_GEN_WARP_LEVELS=2 SE_GEN_WARP_COST=3
one big-low,big-high SE_GEN_WARP_LEVELS=2 SE_GEN_WARP_COST=2
one medium-low,medium-high SE_GEN_WARP_COST=2
one medium-low,medium-high SE_GEN_WARP_COST=3
one big-low,big-high
grep -E "^==|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
echo "end at ${SECONDS}s"
