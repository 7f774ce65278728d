#!/bin/bash
# Final device call of session 11: simengine-bench step at 256 000 cells with the defaults (coop,
# gen with its automatic register rows), then every gpu test (tools/device/check.sh).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s11_final.sh
source .devkit/env.sh
tools/device/build.sh simengine-bench || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s11_final_step.txt
SE_GEN_VERBOSE=1 timeout 150 build-dev/src/simengine-bench step --neurons 256000 --steps 10 \
  --cpu 0 --mixed 0 --huge-swc "" --only coop,gen --csv $OUT/s11_final_step.csv > $S 2>&1
grep -E "coop|gen|fused2|copy|hh comp" $S | grep -vE "^(coop|fused2):"
echo "bench at ${SECONDS}s"
tools/device/check.sh
echo "end at ${SECONDS}s"
