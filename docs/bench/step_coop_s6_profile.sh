#!/bin/bash
# Nsight Compute source-level profile of the coop step (session 6): simengine-bench built with
# -lineinfo in its own build directory (build-li), one step_coop launch of 25 600 medium-high
# cells (4 threads per cell), sections SourceCounters, WarpStateStats, SpeedOfLight; the source
# page exported as CSV (SASS, and CUDA source with SASS) and gzipped into $OUT. From the
# repository root on the device (run tool, carry .devkit): bash docs/bench/step_coop_s6_profile.sh
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
find CMakeLists.txt src io partition cuda include tests -type f -exec touch {} +
cmake -B build-li -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DHDF5_ROOT="$HDF5_ROOT" -DCMAKE_CUDA_FLAGS=-lineinfo > /dev/null
cmake --build build-li -j"$(nproc)" --target simengine-bench > /tmp/li_build.txt 2>&1 ||
  { grep -E "error" /tmp/li_build.txt | head; exit 1; }
echo "built at ${SECONDS}s"
B=build-li/src/simengine-bench
P=/tmp/step_coop_s6_profile
timeout 200 ncu --kernel-name regex:step_coop --launch-skip 2 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --section SpeedOfLight --section LaunchStats \
  --section Occupancy --import-source yes -o $P $B step --neurons 25600 --steps 3 --cpu 0 \
  --mixed 0 --huge-swc "" --classes medium-high --only coop > $OUT/step_coop_s6_profile_log.txt 2>&1
echo "ncu rc=$? at ${SECONDS}s"
ncu -i $P.ncu-rep --page details > $OUT/step_coop_s6_profile_details.txt 2>&1
ncu -i $P.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $OUT/step_coop_s6_profile_sass.csv.gz
ncu -i $P.ncu-rep --page source --csv --print-source cuda,sass 2>&1 | gzip > \
  $OUT/step_coop_s6_profile_cuda_sass.csv.gz
ncu -i $P.ncu-rep --page source --csv --print-source cuda 2>&1 | gzip > $OUT/step_coop_s6_profile_cuda.csv.gz
ls -la $OUT
grep -E "Duration|Warp Cycles Per Issued|Executed Instructions  |Achieved Occ|Registers Per" \
  $OUT/step_coop_s6_profile_details.txt | head
echo "end at ${SECONDS}s"
