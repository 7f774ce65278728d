#!/bin/bash
# Session 13's last device call (about 5 minutes, the budget's rest): balance_state_gpu three
# times (it failed once in s13_call3.sh: a fresh fused2 engine's voltage non-finite within its
# first 63 steps; does it recur?), then engine_stream's GPU part with the new gen defaults (hh
# rows split off, a warp per subtree above 128 rows, a stream per morphology).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s13_call4.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 SE_TEST_GEN_HOST=0
cd build-dev
for i in 1 2 3; do
  timeout 40 ctest -R balance_state_gpu -V > $OUT/balance_state_$i.txt 2>&1
  echo "balance_state_gpu run $i: rc $? at ${SECONDS}s"
  grep -E "non-finite|fused2" $OUT/balance_state_$i.txt | cut -c1-160
done
timeout $((320 - SECONDS)) ctest -R engine_stream -V > $OUT/engine_stream.txt 2>&1
echo "engine_stream rc $? at ${SECONDS}s"
grep -E "GPU gen|checks|Passed|Failed|FAIL" $OUT/engine_stream.txt | cut -c1-200 | tail -24
echo "end at ${SECONDS}s"
