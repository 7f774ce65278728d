#!/bin/bash
# The GPU test suite on the GPU machine: builds build-dev and runs every test labelled gpu
# (ctest -L gpu), leaving the log in $OUT/gpu_tests.txt when OUT is set. Usage, from the
# repository root: source .devkit/env.sh; tools/device/check.sh [ctest options]
set -euo pipefail
# The copied tree's files keep the developer machine's times, and a warm machine keeps build-dev
# from earlier calls: sources older than objects built there would not be rebuilt. Touch them all.
find CMakeLists.txt src io partition cuda include tests -type f -exec touch {} +
cmake -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DHDF5_ROOT="$HDF5_ROOT" >/dev/null
cmake --build build-dev -j"$(nproc)" 2>&1 | grep -E "error|warning:|Built target simengine$" || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && ctest -L gpu -j4 --output-on-failure "$@") 2>&1 | tee "${OUT:-/tmp}/gpu_tests.txt" |
  grep -E "Test +#|tests passed|tests failed|Failed|Error" || true
grep -q "100% tests passed" "${OUT:-/tmp}/gpu_tests.txt"
