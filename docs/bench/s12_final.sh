#!/bin/bash
# Last device call of session 12 (little device time left): the two gpu tests that run gen
# (engine_stream: every morphology alone, the 8 together, chunked hh rows; e2e_gpu: the gen runs
# and auto's runs), after e2e_gpu's GPU runs were limited to one at a time again (s12_first and
# s12_chunk ran up to six at once, which slowed every other gpu test 3x).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s12_final.sh
source .devkit/env.sh
tools/device/build.sh simengine simengine-prep compare_outputs test_stream ||
  { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export SE_E2E_GPU_RUNS="gen-small-low gen-medium-high gen-swc gen-classes distinct huge coop"
(cd build-dev && ctest -R "^(e2e_gpu|engine_stream)$" -j2 --output-on-failure) 2>&1 |
  tee "$OUT/gpu_tests_gen.txt" | grep -E "Test +#|tests passed|tests failed|FAILED|passed,|gen"
echo "end at ${SECONDS}s"
