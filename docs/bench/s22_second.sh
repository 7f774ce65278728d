#!/bin/bash
# The second device call prepared in session 21 (no machine came that session), on the first
# call's warm machine (about 5-6 minutes):
# engine_stream's GPU part (and edd_gpu: session 21 made hines_edd.cu's level view one function
# for host and device), which since session 20 also runs the 8 morphologies with
# SE_GEN_CARVEOUT=80 and with SE_GEN_WARP_HH=2 against the CPU path (neither had run on a GPU
# before); then, in the time left, the six classes together with the arguments given (for
# example SE_GEN_WARP_HH=2) and without, A B B A.
# From the repository root on the device (run tool, carry .devkit):
#   bash docs/bench/s22_second.sh [VAR=VALUE ...]
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && SE_TEST_GEN_HOST=0 timeout 400 ctest -R "engine_stream|edd_gpu" -V) > $OUT/s22_engine_stream.txt 2>&1
echo "engine_stream rc $? at ${SECONDS}s"
grep -E "CARVEOUT|WARP_HH|skipped|checks|Passed|Failed|FAIL" $OUT/s22_engine_stream.txt | tail -20
[ $# -gt 0 ] || { echo "end at ${SECONDS}s"; exit 0; }
source docs/bench/gen_step_one.sh
S=$OUT/s22_second_ab.txt
for a in "" "$*" "$*" ""; do
  [ $((560 - SECONDS)) -gt 60 ] || { echo "no time left for the A/B"; break; }
  one small-low,small-high,medium-low,medium-high,big-low,big-high $a
done
grep -E "^==|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
echo "end at ${SECONDS}s"
