#!/bin/bash
# Session 14, third device call (about 7-8 minutes): every gpu test but e2e_gpu
# (tools/device/check.sh -E e2e_gpu; the first GPU run of session 13's stream-ordering fix and of
# session 14's per-morphology rule for gen), then gen's defaults on the six classes and the six
# together at 256 000 cells (times the byte floor). From the repository root on the device (run
# tool, carry .devkit): bash docs/bench/s14_checks.sh. Then docs/bench/s14_third.sh.
source .devkit/env.sh
timeout 450 tools/device/check.sh -E e2e_gpu; echo "check.sh rc $? at ${SECONDS}s"
grep -E "Test +#|tests passed|tests failed" $OUT/gpu_tests.txt | tail -14
SE_GEN_VERBOSE=1 timeout $((570 - SECONDS)) build-dev/src/simengine-bench step \
  --six 256000 --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen \
  > $OUT/s14_defaults.txt 2>&1
grep -E "copy|cuda gen|rror" $OUT/s14_defaults.txt
echo "end at ${SECONDS}s"
