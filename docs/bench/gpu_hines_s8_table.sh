#!/bin/bash
# Device run (session 8) for the Hines solve alone, big classes (docs/gpu-hines.md, "Session 8:
# the step table in device memory"): the COOP step table (20 B per step and lane, 16 KB per CTA
# for big-high at L 8) read through L1 (-tg) instead of copied into shared memory (-ts) leaves
# the shared memory to the warps: big-high L 8 4 warps with 5 stages (was 3 with 6), big-low L 8
# 4 warps with 6 stages (was 3). Builds, runs gpu_hines on the GPU (both placements), then
# A B A B rows at 256 000 neurons, and the automatic rows of every class.
# Rejected (2.4-2.9x slower, docs/gpu-hines.md "Session 8"): the -ts/-tg variants exist only
# with docs/bench/gpu_hines_s8_table_global_rejected.patch applied to commit e141779.
# Run from the repository root (the `run` tool, carry .devkit); writes into $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
echo "build done at ${SECONDS}s"
T=$OUT/gpu_hines_test_s8_table.txt
(cd build-dev && timeout 150 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|automatic settings|tests passed|tests failed|FAIL|rc=" $T | tail -12
echo "test done at ${SECONDS}s"
R=$OUT/gpu_hines_256000_s8_table.txt
LIMIT=${LIMIT:-520}
bench() { # label args...
  local label=$1; shift
  if [ $SECONDS -gt $LIMIT ]; then echo "== $label: skipped (time)" >> $R; return; fi
  echo "== $label (at ${SECONDS}s)" >> $R
  timeout 90 build-dev/src/simengine-bench gpu-hines --sizes 256000 --min-time 0.1 "$@" >> $R 2>&1
  echo "rc=$?" >> $R
}
BIG_A="--classes big-low,big-high --variants block32-coop-l8-s6-ts,block32-coop-l8-s4-ts,block32-coop-l4-s6-ts"
BIG_B="--classes big-low,big-high --variants block32-coop-l8-s6-tg,block32-coop-l8-s5-tg,block32-coop-l8-s4-tg,block32-coop-l4-s6-tg"
MED="--classes medium-low,medium-high,small-low --variants block32-coop-l4-s6-ts,block32-coop-l4-s6-tg,block32-coop-l2-s6-c2-ts,block32-coop-l2-s6-c2-tg"
bench "big, table in shared memory (A)" $BIG_A
bench "big, table in device memory (B)" $BIG_B
bench "big, A again" $BIG_A
bench "big, B again" $BIG_B
bench "medium and small, both placements" $MED
bench "automatic, all classes" --variants block32-auto,full-auto --csv $OUT/gpu_hines_auto_s8_table.csv
bench "big, B, 25 600" --sizes 25600 $BIG_B
echo "bench done at ${SECONDS}s"
grep -E "^==|ok|n/a|FAIL|wrong|rc=|error" $R | cut -c1-12,37-140
