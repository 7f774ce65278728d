#!/bin/bash
# Builds build-dev on the GPU machine (Release, sm_90, the kit's HDF5), only the given targets
# (all without arguments). The copied tree keeps this machine's file times while a warm machine
# keeps build-dev from earlier calls, so a source edited since can look older than its object:
# every source is touched first. Usage, from the repository root after `source .devkit/env.sh`:
#   tools/device/build.sh [TARGET ...]
set -euo pipefail
find CMakeLists.txt src io partition cuda include tests -type f -exec touch {} +
cmake -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DHDF5_ROOT="$HDF5_ROOT" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
log=$(mktemp)
if ! cmake --build build-dev -j"$(nproc)" "${targets[@]}" >"$log" 2>&1; then
  grep -E "error" "$log" | head -20
  exit 1
fi
grep -E "warning:" "$log" || true
