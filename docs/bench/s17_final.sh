#!/bin/bash
# Session 17, fourth device call (about 8-9 minutes): builds everything; gen's defaults (hh.h
# with two exponentials, the rows that divide weighing 5 above 512 rows, the level guard at
# 128 B) on the six classes and the six together at 256 000 cells; e2e_gpu alone (every GPU run
# of simengine against the CPU path through the HDF5 output); medium-low (1.54x in call 3) with
# cut 0, compiler barriers every 4 and 16 rows, prefetches 12 rows ahead and into L2; big-low
# with 40 and 56 rows per warp in registers and weight 7; the GPU-vs-CPU row (25 600
# medium-high cells, 16 OpenMP threads). From the repository root on the device (run tool,
# carry .devkit): bash docs/bench/s17_final.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
SE_GEN_VERBOSE=1 timeout 100 build-dev/src/simengine-bench step --six 256000 --neurons 256000 \
  --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen > $OUT/s17_defaults.txt 2>&1
grep -E "copy|hh compartment|cuda gen|rror" $OUT/s17_defaults.txt
grep -oE "69[15] rows[^;]*" $OUT/s17_defaults.txt | sort -u
echo "defaults at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && timeout 420 ctest -R e2e_gpu -V) > $OUT/e2e_gpu.txt 2>&1
echo "e2e_gpu rc $? at ${SECONDS}s"
grep -E "max \|dv\||Passed|Failed|FAIL" $OUT/e2e_gpu.txt | sed 's/.*gen-/gen-/' | cut -c1-200 | tail -12
grep -oE "69[15] rows[^;]*" $OUT/e2e_gpu.txt | sort -u
OMP_NUM_THREADS=16 timeout 60 build-dev/src/simengine-bench step \
  --classes medium-high --neurons 25600 --steps 10 --mixed 0 --huge-swc "" --only cpu,fused2,gen \
  > $OUT/s17_gpu_vs_cpu_final.txt 2>&1
cat $OUT/s17_gpu_vs_cpu_final.txt
S=$OUT/s17_more.txt
source docs/bench/gen_step_one.sh
for v in SE_GEN_WARP_CUT=0 SE_GEN_WINDOW=4 SE_GEN_WINDOW=16 SE_GEN_PREFETCH=12 \
         SE_GEN_PREFETCH_LEVEL=2 X=defaults; do
  [ $SECONDS -lt 555 ] && one medium-low $v
done
for v in SE_GEN_WARP_REG_ROWS=40 SE_GEN_WARP_REG_ROWS=56 "SE_GEN_WARP_COST=7 SE_GEN_WARP_LEVELS=2"; do
  [ $SECONDS -lt 555 ] && one big-low $v
done
grep -E "^==|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
echo "end at ${SECONDS}s"
