#!/bin/bash
# Session 16, fifth device call (about 6 minutes): engine_stream alone (its GPU part: the level
# guard, the prefetches, the forced two-level big-low run, every gen, fused2 and coop run against
# the CPU path). The fourth call (s16_e2e.sh) ran it beside e2e_gpu, and neither finished within
# check.sh's 420 s. From the repository root on the device (run tool, carry .devkit):
# bash docs/bench/s16_stream.sh
source .devkit/env.sh
tools/device/build.sh test_stream > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 SE_TEST_GEN_HOST=0
(cd build-dev && timeout 360 ctest -R engine_stream -V) > $OUT/engine_stream.txt 2>&1
echo "engine_stream rc $? at ${SECONDS}s"
grep -E "level guard|FAIL|checks,|tests passed|Total Test" $OUT/engine_stream.txt | tail -12
