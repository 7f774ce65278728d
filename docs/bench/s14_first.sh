#!/bin/bash
# Prepared in session 13 for the next session's first device call (about 6-7 minutes): every gpu
# test but e2e_gpu (tools/device/check.sh -E e2e_gpu): the first GPU run of session 13's stream
# ordering fix (device synchronizations after the legacy-stream uploads; balance_state_gpu
# failed once under load before it) and of SE_GEN_WARP_CUT=1 (engine_stream). Then run
# docs/bench/s14_second.sh (e2e_gpu with session 13's defaults, the warp partitions measured).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s14_first.sh
source .devkit/env.sh
timeout 560 tools/device/check.sh -E e2e_gpu; echo "check.sh rc $? at ${SECONDS}s"
grep -E "Test +#|tests passed|tests failed" $OUT/gpu_tests.txt | tail -12
