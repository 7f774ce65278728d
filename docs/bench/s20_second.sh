#!/bin/bash
# Session 20's second device call (about 6 minutes; ran on an H100 right after s20_first.sh, on
# the same warm machine): e2e_gpu with SE_GEN_LITERALS=1 (the literal tables in shared memory for
# every warps' kernel above 128 rows; the default since then takes them above 512 rows), then
# GPU vs CPU on 25 600 big-low cells (the CPU path on 16 OpenMP threads against gen).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s20_second.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && SE_GEN_LITERALS=1 timeout 400 ctest -R e2e_gpu -V) > $OUT/e2e_gpu.txt 2>&1
echo "e2e_gpu rc $? at ${SECONDS}s"
grep -E "gen|Passed|Failed|FAIL" $OUT/e2e_gpu.txt | tail -20
OMP_NUM_THREADS=16 timeout $((560 - SECONDS)) build-dev/src/simengine-bench step \
  --classes big-low --neurons 25600 --steps 10 --mixed 0 --huge-swc "" --only cpu,gen \
  > $OUT/s20_gpu_vs_cpu.txt 2>&1
cat $OUT/s20_gpu_vs_cpu.txt
echo "end at ${SECONDS}s"
