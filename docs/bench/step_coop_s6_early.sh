#!/bin/bash
# Device call of session 6 (after the -lineinfo profile, docs/bench/step_coop_s6_profile.sh):
# the coop step with the clamp list's bounds and the first hh record loaded before the v copies
# (temporary switch SE_COOP_EARLY, default 1) against the kernel before (SE_COOP_EARLY=0), A B A B
# at 256 000 cells, then engine_stream with the default. From the repository root on the device
# (run tool, carry .devkit): bash docs/bench/step_coop_s6_early.sh
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_stream simengine-bench || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
R=$OUT/step_coop_s6_early_bench.txt
for e in 0 1 0 1; do
  echo "== SE_COOP_EARLY=$e" >> $R
  SE_COOP_EARLY=$e timeout 30 build-dev/src/simengine-bench step --neurons 256000 --steps 10 \
    --cpu 0 --mixed 0 --huge-swc "" --only coop >> $R 2>&1
done
echo "bench at ${SECONDS}s"
grep -E "^==|coop" $R | grep -vE "^coop:"
(cd build-dev && timeout $((230 - SECONDS)) ctest -R engine_stream --output-on-failure -V) \
  > $OUT/step_coop_s6_early_tests.txt 2>&1
echo "engine_stream rc=$? at ${SECONDS}s"
grep -E "checks|max \|dv\||Passed|Failed" $OUT/step_coop_s6_early_tests.txt | tail -8
