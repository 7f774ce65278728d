#!/bin/bash
# The last device call of session 7 (one call, about 8 minutes on a fresh machine):
#   bash docs/bench/final_s7_h200.sh
# builds everything (sources touched first), runs every gpu test (ctest -L gpu, e2e_gpu with all
# its runs; the log in $OUT/gpu_tests.txt), then the automatic Hines rows (Block-Interleaved and
# Full-Interleaved) at 256, 2 560, 25 600 and 256 000 neurons with the committed COOP kernel
# (groups from a counter) and the refitted model into $OUT/gpu_hines_auto_s7_final.{txt,csv}.
# Run from the repository root (the `run` tool, carry .devkit).
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh
echo "built at ${SECONDS}s"
(cd build-dev && timeout $((520 - SECONDS)) ctest -L gpu -j4 --output-on-failure) 2>&1 |
  tee $OUT/gpu_tests.txt | grep -E "Test +#|tests passed|tests failed|Failed|Error|automatic choice"
grep -E "gpu_hines:|automatic" $OUT/gpu_tests.txt | head -16
echo "tests at ${SECONDS}s"
timeout $((590 - SECONDS)) build-dev/src/simengine-bench gpu-hines --sizes 256000,25600,2560,256 \
  --min-time 0.03 --variants block32-auto,full-auto --csv $OUT/gpu_hines_auto_s7_final.csv \
  > $OUT/gpu_hines_auto_s7_final.txt 2>&1
grep -E "copy band|auto" $OUT/gpu_hines_auto_s7_final.txt | cut -c1-150
echo "end at ${SECONDS}s"
