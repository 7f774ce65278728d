#!/bin/bash
# Session 15, fourth device call (about 7-8 minutes): e2e_gpu
# (every GPU run of simengine against the CPU path through the HDF5 output; the first run with
# session 15's gen defaults), then the GPU-vs-CPU row with gen: 25 600 medium-high cells on the
# CPU (16 OpenMP threads), fused2 and gen, as session 14's 98x.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s15_e2e.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && timeout 420 ctest -R e2e_gpu -V) > $OUT/e2e_gpu.txt 2>&1
echo "e2e_gpu rc $? at ${SECONDS}s"
grep -E "gen|Passed|Failed|FAIL" $OUT/e2e_gpu.txt | tail -20
OMP_NUM_THREADS=16 timeout $((570 - SECONDS)) build-dev/src/simengine-bench step \
  --classes medium-high --neurons 25600 --steps 10 --mixed 0 --huge-swc "" --only cpu,fused2,gen \
  > $OUT/s15_gpu_vs_cpu.txt 2>&1
cat $OUT/s15_gpu_vs_cpu.txt
echo "end at ${SECONDS}s"
