#!/bin/bash
# Session 19's second device call (about 8 minutes), after the change of gen's defaults to the
# scaled rows, FMA contraction and the fold (SE_GEN_SCALED=1 SE_GEN_FMAD=1 SE_GEN_HH_FOLD=1, the
# winners of s18_first.sh): builds everything; gen on the six classes and the six together at
# 256 000 cells with the new defaults, then with session 17's (the three set to 0) on the same
# card; the GPU-vs-CPU row (25 600 medium-high cells, 16 OpenMP threads); then e2e_gpu (every GPU
# run of simengine against the CPU path through the HDF5 output).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s19_final.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
source docs/bench/gen_step_one.sh
six > $OUT/s19_defaults.txt 2>&1
six SE_GEN_SCALED=0 SE_GEN_FMAD=0 SE_GEN_HH_FOLD=0 > $OUT/s19_defaults_s17.txt 2>&1
for f in s19_defaults s19_defaults_s17; do
  echo "== $f"; grep -E "copy|hh compartment|cuda gen|rror" $OUT/$f.txt
done
echo "six done at ${SECONDS}s"
OMP_NUM_THREADS=16 timeout 120 build-dev/src/simengine-bench step \
  --classes medium-high --neurons 25600 --steps 10 --mixed 0 --huge-swc "" --only cpu,fused2,gen \
  > $OUT/s19_gpu_vs_cpu.txt 2>&1
cat $OUT/s19_gpu_vs_cpu.txt
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && timeout $((590 - SECONDS)) ctest -R e2e_gpu -V) > $OUT/e2e_gpu.txt 2>&1
echo "e2e_gpu rc $? at ${SECONDS}s"
grep -E "gen|Passed|Failed|FAIL" $OUT/e2e_gpu.txt | tail -20
echo "end at ${SECONDS}s"
