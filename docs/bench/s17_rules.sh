#!/bin/bash
# Session 17, third device call (about 8 minutes): builds everything; gen's step at 256 000
# cells with the rule's new weights (SE_GEN_WARP_COST: 3 above 512 rows) and the level guard's
# SE_GEN_LEVEL_LOCAL (64 B), then the weights 4, 5, 6 with 2 levels forced on the big classes
# (offline, tools/gen_phases.py: big-low's critical path 2853, 2716, 2706, 2865 instructions at
# W = 3, 4, 5, 6, spilling 36, 88, 88, 0 B), 6 and 8 warps on the medium classes (medium-low's
# critical path 2851 instructions at 4 warps, 2104 at 6, 2202 at 8); then every gpu test but
# e2e_gpu (docs/bench/s17_e2e2.sh runs it). From the repository root on the device (run tool,
# carry .devkit): bash docs/bench/s17_rules.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s17_rules.txt
source docs/bench/gen_step_one.sh
one big-low,big-high
one big-low,big-high SE_GEN_WARP_LEVELS=2 SE_GEN_WARP_COST=4
one big-low,big-high SE_GEN_WARP_LEVELS=2 SE_GEN_WARP_COST=5
one big-low,big-high SE_GEN_WARP_LEVELS=2 SE_GEN_WARP_COST=6
one medium-low,medium-high
one medium-low,medium-high SE_GEN_WARPS=6
one medium-low,medium-high SE_GEN_WARPS=8
one medium-low,medium-high SE_GEN_WARPS=6 SE_GEN_WARP_MIN_BLOCKS=3
one big-low,big-high
grep -E "^==|cuda gen|rror|local memory" $S | sed 's/ (at [0-9]*s)//;s/^gen: 1 morphology.*rows: /  /' | cut -c1-220
echo "runs done at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 SE_TEST_GEN_HOST=0
(cd build-dev && timeout $((575 - SECONDS)) ctest -L gpu -E e2e_gpu -j4 -V) > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc $? at ${SECONDS}s"
grep -E "Test +#|tests passed|tests failed|level guard|FAIL" $OUT/gpu_tests.txt | tail -16
