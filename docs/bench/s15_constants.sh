#!/bin/bash
# Session 15, sixth device call (about 6 minutes): gen's row constants from __constant__ arrays
# (SE_GEN_CONSTANTS=1) against FP64 literals (the default), which the compiler materialises with
# two UMOV instructions per use (42% of big-low's step kernel: 5921 of 14120 instructions; with
# the arrays 11168, ULDC instead of UMOV pairs; the big kernels wait on instruction fetch, gpu.md
# "Session 15"). The six classes and the six together at 256 000 cells (times the byte floor),
# then engine_stream's GPU part with SE_GEN_CONSTANTS=1 for every gen run (the test binary
# directly, its host runs left out). From the repository root on the device (run tool, carry
# .devkit): bash docs/bench/s15_constants.sh
# Ran once (bench/s15_constants_h200.txt, s15_constants_test_h200.txt): slower on five classes,
# so SE_GEN_CONSTANTS was removed after it (in the commit history); the script is the record.
source .devkit/env.sh
tools/device/build.sh simengine-bench test_stream > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s15_constants.txt
for c in 0 1; do
  echo "== SE_GEN_CONSTANTS=$c (at ${SECONDS}s)" >> $S
  SE_GEN_CONSTANTS=$c SE_GEN_VERBOSE=1 timeout 90 build-dev/src/simengine-bench step --six 256000 \
    --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
grep -E "^==|copy|cuda gen|rror" $S
echo "engine_stream's GPU part with SE_GEN_CONSTANTS=1 (at ${SECONDS}s)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SE_GEN_CONSTANTS=1 SE_TEST_GEN_HOST=0 timeout $((390 - SECONDS)) build-dev/tests/test_stream \
  > $OUT/s15_constants_test.txt 2>&1
echo "test_stream rc $? at ${SECONDS}s"
grep -E "FAIL|passed|failed|skipped" $OUT/s15_constants_test.txt | head -20
tail -3 $OUT/s15_constants_test.txt
