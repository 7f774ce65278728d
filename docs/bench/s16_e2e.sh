#!/bin/bash
# Session 16, third device call (about 7 minutes): engine_stream (its GPU part after the fix of
# the forced two-level big-low run, whose one cell fires once) and e2e_gpu (every GPU run of
# simengine against the CPU path through the HDF5 output; the first with the guarded second
# level) side by side, then the GPU-vs-CPU row: 25 600 medium-high cells on the CPU (16 OpenMP
# threads), fused2 and gen. From the repository root on the device (run tool, carry .devkit):
# bash docs/bench/s16_e2e.sh
source .devkit/env.sh
timeout 420 tools/device/check.sh -R "e2e_gpu|engine_stream"; echo "check.sh rc $? at ${SECONDS}s"
grep -E "Test +#|tests passed|tests failed|level guard|FAIL|gen .*six|gen.*max" $OUT/gpu_tests.txt | tail -24
OMP_NUM_THREADS=16 timeout $((570 - SECONDS)) build-dev/src/simengine-bench step \
  --classes medium-high --neurons 25600 --steps 10 --mixed 0 --huge-swc "" --only cpu,fused2,gen \
  > $OUT/s16_gpu_vs_cpu.txt 2>&1
cat $OUT/s16_gpu_vs_cpu.txt
echo "end at ${SECONDS}s"
