#!/bin/bash
# Device run (session 9, call 3): the list schedule (coop_list) and 16 register chunks.
# gpu_hines on the GPU, then every COOP shape worth choosing on blocks of 4, 8, 16, 32 at
# 256 000 neurons, the six classes (docs/gpu-hines.md "Session 9"). Run from the repository
# root (carry .devkit):  bash docs/bench/gpu_hines_s9_list.sh
source .devkit/env.sh
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
(cd build-dev && timeout 200 ctest -R gpu_hines -V) > $OUT/gpu_hines_test_s9_list.txt 2>&1
grep -E "checks|FAIL|tests passed|tests failed" $OUT/gpu_hines_test_s9_list.txt | tail -8
echo "test at ${SECONDS}s"
R=$OUT/gpu_hines_s9_list.txt
V=block4-auto,block8-auto,block16-auto,block32-auto
V=$V,block4-coop-l8-s5-reg,block4-coop-l8-s6-reg,block4-coop-l8-s4-reg,block4-coop-l8-noreg
V=$V,block8-coop-l4,block8-coop-l8,block16-coop-l2,block16-coop-l4,block32-coop-l4,block32-coop-l8
V=$V,block4-coop-l8-c2-reg,block8-coop-l4-c2,block16-coop-l2-c2
timeout 300 build-dev/src/simengine-bench gpu-hines --sizes 256000 --min-time 0.1 \
  --variants $V --csv $OUT/gpu_hines_s9_list.csv > $R 2>&1
grep -E "copy band|ok|wrong|error" $R | cut -c1-12,37-62,75-120
echo "end at ${SECONDS}s"
