#!/bin/bash
# The last device call of session 8 (one call, about 9 minutes on a fresh machine):
#   bash docs/bench/final_s8_h200.sh
# builds everything (sources touched first); the Hines rows at 256 000 neurons on the small
# blocks (BS = one COOP warp's systems) against block 32, and the automatic rows on block 32,
# full and block 4/8 ($OUT/gpu_hines_s8_blocks.{txt,csv}); then every gpu test (ctest -L gpu,
# e2e_gpu with all its runs; the log in $OUT/gpu_tests.txt).
# Run from the repository root (the `run` tool, carry .devkit).
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
B=build-dev/src/simengine-bench
R=$OUT/gpu_hines_s8_blocks.txt
timeout 100 $B gpu-hines --sizes 256000 --min-time 0.1 \
  --variants block32-coop-l8-s6,block4-coop-l8-s6,block8-coop-l8-s6,block32-coop-l4-s6,block8-coop-l4-s6,block16-coop-l2-s6-c2,block32-coop-l2-s6-c2 \
  > $R 2>&1
timeout 120 $B gpu-hines --sizes 256000,25600 --min-time 0.05 \
  --variants block32-auto,full-auto,block4-auto,block8-auto,block16-auto --csv $OUT/gpu_hines_s8_auto.csv \
  >> $R 2>&1
grep -E "copy band|ok|wrong|error" $R | cut -c1-12,20-27,37-120
echo "bench at ${SECONDS}s"
(cd build-dev && timeout $((590 - SECONDS)) ctest -L gpu -j4 --output-on-failure) 2>&1 |
  tee $OUT/gpu_tests.txt | grep -E "Test +#|tests passed|tests failed|Failed|Error"
grep -E "gpu_hines:|blocks of" $OUT/gpu_tests.txt | head -6
echo "tests at ${SECONDS}s"
