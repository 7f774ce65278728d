#!/bin/bash
# Session 16, fourth device call (about 9 minutes): engine_stream (its GPU part: the level
# guard, the prefetches, the forced two-level big-low run) and e2e_gpu (every GPU run of
# simengine against the CPU path through the HDF5 output; the first with session 16's defaults)
# side by side, then gen's defaults on the six classes and the six together at 256 000 cells,
# then the GPU-vs-CPU row: 25 600 medium-high cells on the CPU (16 OpenMP threads), fused2 and
# gen. From the repository root on the device (run tool, carry .devkit):
# bash docs/bench/s16_e2e.sh
source .devkit/env.sh
timeout 420 tools/device/check.sh -R "e2e_gpu|engine_stream"; echo "check.sh rc $? at ${SECONDS}s"
grep -E "Test +#|tests passed|tests failed|level guard|FAIL" $OUT/gpu_tests.txt | tail -12
SE_GEN_VERBOSE=1 timeout 100 build-dev/src/simengine-bench step --six 256000 --neurons 256000 \
  --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen > $OUT/s16_defaults_final.txt 2>&1
grep -E "copy|cuda gen|rror" $OUT/s16_defaults_final.txt
OMP_NUM_THREADS=16 timeout $((585 - SECONDS)) build-dev/src/simengine-bench step \
  --classes medium-high --neurons 25600 --steps 10 --mixed 0 --huge-swc "" --only cpu,fused2,gen \
  > $OUT/s16_gpu_vs_cpu.txt 2>&1
cat $OUT/s16_gpu_vs_cpu.txt
echo "end at ${SECONDS}s"
