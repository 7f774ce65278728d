#!/bin/bash
# Session 13's third device call (about 9 minutes): every gpu test (tools/device/check.sh, the
# new defaults: hh rows split off, a warp per subtree above 128 rows, a stream per morphology),
# then, in the time left, gen with the defaults on the six classes alone and together.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s13_call3.sh
source .devkit/env.sh
timeout 470 tools/device/check.sh; echo "check.sh rc $? at ${SECONDS}s"
grep -E "Test +#|tests passed|tests failed" $OUT/gpu_tests.txt | tail -40
if [ $SECONDS -lt 480 ]; then
  S=$OUT/s13_defaults.txt
  SE_GEN_VERBOSE=1 timeout 60 build-dev/src/simengine-bench step \
    --classes small-low,small-high,medium-low,medium-high,big-low,big-high --six 256000 \
    --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen > $S 2>&1
  grep -E "cuda gen|rror|copy" $S
fi
echo "end at ${SECONDS}s"
