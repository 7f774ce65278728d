#!/bin/bash
# The GPU test suite on the GPU machine: builds build-dev and runs every test labelled gpu
# (ctest -L gpu), leaving the log (every test's output, ctest -V) in $OUT/gpu_tests.txt when OUT
# is set; the console shows ctest's summary lines and the comparisons' results. Usage, from the
# repository root: source .devkit/env.sh; tools/device/check.sh [ctest options]. engine_stream's
# host runs of the generated kernels (CI runs them) are left out: SE_TEST_GEN_HOST=0.
set -euo pipefail
tools/device/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 SE_TEST_GEN_HOST=0
(cd build-dev && ctest -L gpu -j4 -V "$@") 2>&1 | tee "${OUT:-/tmp}/gpu_tests.txt" |
  grep -E "Test +#|tests passed|tests failed|Failed|FAILED|Error|passed, [0-9]+ failed" || true
grep -q "100% tests passed" "${OUT:-/tmp}/gpu_tests.txt"
