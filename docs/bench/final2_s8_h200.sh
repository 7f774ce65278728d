#!/bin/bash
# The second final device call of session 8 (after the register rows came back for block 4):
#   bash docs/bench/final2_s8_h200.sh
# builds gpu_hines and the bench, runs gpu_hines on the GPU (every COOP setting, the small blocks
# and the register rows, block 4 included), then the automatic rows on blocks of 4 and 8 at
# 256 000 neurons. Run from the repository root (carry .devkit).
source .devkit/env.sh
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
(cd build-dev && timeout 140 ctest -R gpu_hines -V) > $OUT/gpu_hines_test_s8_final2.txt 2>&1
grep -E "checks|register rows|blocks of|tests passed|tests failed|FAIL" $OUT/gpu_hines_test_s8_final2.txt | tail -8
echo "test at ${SECONDS}s"
R=$OUT/gpu_hines_s8_final2.txt
timeout 60 build-dev/src/simengine-bench gpu-hines --sizes 256000 --min-time 0.1 \
  --variants block4-auto,block8-auto --csv $OUT/gpu_hines_s8_final2.csv > $R 2>&1
grep -E "copy band|ok|wrong|error" $R | cut -c1-12,37-62,75-120
echo "end at ${SECONDS}s"
