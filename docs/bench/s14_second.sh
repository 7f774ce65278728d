#!/bin/bash
# Prepared in session 13 for the next session's second device call (about 6-7 minutes): gen's
# warp partitions at 256 000 cells (SE_GEN_WARP_CUT 0 and 1 at 4, 6 and 8 warps per 32 cells,
# docs/gpu.md "What is left": the trunk runs alone in warp 0; cut 1 shortens it, e.g. big-low at
# K = 8 from 103 to 56 rows; and registers for 2 blocks per multiprocessor,
# SE_GEN_WARP_MIN_BLOCKS=2, at 6 and 8 warps), times the byte floor; then e2e_gpu (not yet run
# with session 13's defaults) in the time left (it needs about 6 minutes: if it is cut off, run
# it alone, `cd build-dev && ctest -R e2e_gpu -V`, in the next call).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s14_second.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s14_cut.txt
for cfg in "0 4 0" "1 4 0" "0 6 0" "1 6 0" "0 8 0" "1 8 0" "1 6 2" "1 8 2"; do
  set -- $cfg # the partition, the warps, the blocks per multiprocessor for the registers
  echo "== SE_GEN_WARP_CUT=$1 SE_GEN_WARPS=$2 SE_GEN_WARP_MIN_BLOCKS=$3 (at ${SECONDS}s)" >> $S
  SE_GEN_WARP_CUT=$1 SE_GEN_WARPS=$2 SE_GEN_WARP_MIN_BLOCKS=$3 SE_GEN_VERBOSE=1 timeout 50 \
    build-dev/src/simengine-bench step --classes medium-low,medium-high,big-low,big-high \
    --six 256000 --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
grep -E "^==|cuda gen|rror" $S
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && timeout $((570 - SECONDS)) ctest -R e2e_gpu -V) > $OUT/e2e_gpu.txt 2>&1
echo "e2e_gpu rc $? at ${SECONDS}s"
grep -E "gen|Passed|Failed|FAIL" $OUT/e2e_gpu.txt | tail -20
