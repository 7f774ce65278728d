#!/bin/bash
# Builds a copy of this tree with a patch applied, the B side of an A/B device run: copies the
# sources to DIR, applies PATCH (patch -p1) and builds the given targets in DIR/build (Release,
# sm_90, the kit's HDF5) with JOBS parallel jobs. Usage, from the repository root after
# `source .devkit/env.sh`:  tools/device/build_patched.sh PATCH DIR JOBS TARGET...
set -euo pipefail
patch_file=$1 dir=$2 jobs=$3
shift 3
rm -rf "$dir" && mkdir -p "$dir"
cp -r CMakeLists.txt cmake src io partition cuda include tests tools "$dir/"
patch -d "$dir" -p1 < "$patch_file"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DHDF5_ROOT="${HDF5_ROOT:-}" >/dev/null
if ! cmake --build "$dir/build" -j"$jobs" "${targets[@]}" > "$dir/build.log" 2>&1; then
  grep -E "error|Stop" "$dir/build.log" | head -20
  exit 1
fi
