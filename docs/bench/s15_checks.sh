#!/bin/bash
# Session 15, third device call (about 8 minutes): every gpu test but e2e_gpu
# (tools/device/check.sh -E e2e_gpu; the first GPU run of session 15's rule: 4 warps up to 512
# rows, each warp's y in registers for its last 48 rows above 128 rows, 32 for long sections up
# to 512 rows), then gen's defaults on the six classes and the six together at 256 000 cells
# (times the byte floor), then against them medium-low with a thread per cell (session 14's
# default) and the big classes with 4 warps. From the repository root on the device (run tool,
# carry .devkit): bash docs/bench/s15_checks.sh. Then docs/bench/s15_e2e.sh.
source .devkit/env.sh
timeout 420 tools/device/check.sh -E e2e_gpu; echo "check.sh rc $? at ${SECONDS}s"
grep -E "Test +#|tests passed|tests failed" $OUT/gpu_tests.txt | tail -14
SE_GEN_VERBOSE=1 timeout 100 build-dev/src/simengine-bench step --six 256000 --neurons 256000 \
  --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen > $OUT/s15_defaults.txt 2>&1
grep -E "copy|cuda gen|rror" $OUT/s15_defaults.txt
echo "== medium-low, SE_GEN_WARPS=1 (at ${SECONDS}s)" | tee $OUT/s15_ab.txt
SE_GEN_WARPS=1 SE_GEN_VERBOSE=1 timeout 40 build-dev/src/simengine-bench step --classes medium-low \
  --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $OUT/s15_ab.txt 2>&1
echo "== big classes, SE_GEN_WARPS=4 (at ${SECONDS}s)" | tee -a $OUT/s15_ab.txt
SE_GEN_WARPS=4 SE_GEN_VERBOSE=1 timeout 60 build-dev/src/simengine-bench step --classes big-low,big-high \
  --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $OUT/s15_ab.txt 2>&1
grep -E "^==|cuda gen|rror" $OUT/s15_ab.txt
echo "end at ${SECONDS}s"
