#!/bin/bash
# Prepared in session 18 for the call after a change of gen's defaults (about 9 minutes): builds
# everything; gen's defaults on the six
# classes and the six together at 256 000 cells; e2e_gpu alone (every GPU run of simengine
# against the CPU path through the HDF5 output); the GPU-vs-CPU row (25 600 medium-high cells,
# 16 OpenMP threads). From the repository root on the device (run tool, carry .devkit):
# bash docs/bench/s18_final.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
SE_GEN_VERBOSE=1 timeout 100 build-dev/src/simengine-bench step --six 256000 --neurons 256000 \
  --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen > $OUT/s18_defaults.txt 2>&1
grep -E "copy|hh compartment|cuda gen|rror" $OUT/s18_defaults.txt
echo "defaults at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && timeout 400 ctest -R e2e_gpu -V) > $OUT/e2e_gpu.txt 2>&1
echo "e2e_gpu rc $? at ${SECONDS}s"
grep -E "max \|dv\||Passed|Failed|FAIL" $OUT/e2e_gpu.txt | sed 's/.*gen-/gen-/' | cut -c1-200 | tail -12
[ $SECONDS -lt 540 ] && OMP_NUM_THREADS=16 timeout 50 build-dev/src/simengine-bench step \
  --classes medium-high --neurons 25600 --steps 10 --mixed 0 --huge-swc "" --only cpu,fused2,gen \
  > $OUT/s18_gpu_vs_cpu.txt 2>&1
cat $OUT/s18_gpu_vs_cpu.txt
echo "end at ${SECONDS}s"
