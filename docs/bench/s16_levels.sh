#!/bin/bash
# Prepared in session 15 for the next session (about 4 minutes): gen's second level of pieces
# (SE_GEN_WARP_LEVELS=2; host-run in CI, engine_stream's GPU part runs it on one big-low cell,
# not yet measured). With one level, warp 0 eliminates the trunk alone while the other warps
# wait at the barrier (a third of big-low's stalls, Nsight Compute in session 15); rows on a
# block's critical path (the most piece rows of a warp plus the trunk): big-low 180 -> 123 at
# K = 8 (height 83, 87 rows per warp on average), big-high 116 -> 99; the medium classes keep
# one level (it would save at most 4 rows). ptxas: big-low spills 96 B at 128 registers with 2
# levels, so R = 40 too. The defaults, then SE_GEN_WARP_LEVELS=2, then with R = 40, then the
# six together, times the byte floor at 256 000 cells. From the repository root on the device
# (run tool, carry .devkit): bash docs/bench/s16_levels.sh
source .devkit/env.sh
tools/device/build.sh simengine-bench > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s16_levels.txt
source docs/bench/gen_step_one.sh
one big-low,big-high
one big-low,big-high SE_GEN_WARP_LEVELS=2
one big-low,big-high SE_GEN_WARP_LEVELS=2 SE_GEN_WARP_REG_ROWS=40
one big-low,big-high
echo "== six: defaults, then SE_GEN_WARP_LEVELS=2 (at ${SECONDS}s)" >> $S
for v in SE_GEN_WARP_LEVELS=1 SE_GEN_WARP_LEVELS=2; do
  env $v SE_GEN_VERBOSE=1 timeout 90 build-dev/src/simengine-bench step --six 256000 \
    --classes big-low --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen \
    >> $S 2>&1
done
grep -E "^==|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
echo "end at ${SECONDS}s"
