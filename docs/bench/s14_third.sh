#!/bin/bash
# Prepared in session 13 for the next session's third device call (about 7-8 minutes): e2e_gpu
# (every GPU run of simengine against the CPU path through the HDF5 output; not yet run with
# session 14's gen defaults), then the GPU-vs-CPU row with gen: 25 600 medium-high cells on the
# CPU (16 OpenMP threads) and gen, as session 4's 17x with fused2.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s14_third.sh
# (TAG=s15 names the GPU-vs-CPU file s15_gpu_vs_cpu.txt: docs/bench/s15_e2e.sh)
TAG=${TAG:-s14}
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && timeout 420 ctest -R e2e_gpu -V) > $OUT/e2e_gpu.txt 2>&1
echo "e2e_gpu rc $? at ${SECONDS}s"
grep -E "gen|Passed|Failed|FAIL" $OUT/e2e_gpu.txt | tail -20
OMP_NUM_THREADS=16 timeout $((570 - SECONDS)) build-dev/src/simengine-bench step \
  --classes medium-high --neurons 25600 --steps 10 --mixed 0 --huge-swc "" --only cpu,fused2,gen \
  > $OUT/${TAG}_gpu_vs_cpu.txt 2>&1
cat $OUT/${TAG}_gpu_vs_cpu.txt
echo "end at ${SECONDS}s"
