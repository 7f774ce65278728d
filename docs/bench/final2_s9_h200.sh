#!/bin/bash
# Session 9's last Hines call (one H200), after the list schedule was limited to plans where it
# takes fewer steps than the levels: gpu_hines on the GPU, then the automatic rows (full, blocks
# of 4, 8, 16, 32) at 256 000 neurons, the six classes. From the repository root (the `run`
# tool, carry .devkit):  bash docs/bench/final2_s9_h200.sh
source .devkit/env.sh
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
(cd build-dev && timeout 200 ctest -R gpu_hines -V) > $OUT/gpu_hines_test_s9_final2.txt 2>&1
grep -E "checks|FAIL|tests passed|tests failed" $OUT/gpu_hines_test_s9_final2.txt | tail -6
echo "test at ${SECONDS}s"
R=$OUT/gpu_hines_s9_final2.txt
timeout 120 build-dev/src/simengine-bench gpu-hines --sizes 256000 --min-time 0.1 \
  --variants full-auto,block4-auto,block8-auto,block16-auto,block32-auto \
  --csv $OUT/gpu_hines_s9_final2.csv > $R 2>&1
grep -E "copy band|256000.*ok|wrong|error" $R | cut -c1-12,37-62,75-120
echo "end at ${SECONDS}s"
