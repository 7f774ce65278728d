#!/bin/bash
# Prepared in session 19 for the next session's first device call, on an H200
# if one comes (session 19 had only H100s): builds everything; gen on the six classes and the six
# together at 256 000 cells with session 19's defaults (scaled rows, FMA, the fold, row weight 6
# above 512 rows), then with session 17's (the three off, weight 5) on the same card; big-low
# and big-high at weight 5 against the default 6, A B A B; the literal tables in shared memory
# and in global memory (SE_GEN_LITERALS=1 and 2, gpu.md "Session 19" item 7) on the medium and
# big classes, A B C C B A; then engine_stream's GPU part (not yet run with weight 6 or the
# literal tables on a GPU). About 8-9 minutes: if it comes short of time, drop the second six()
# line. The second call: TAG=s20 bash docs/bench/s14_third.sh (e2e_gpu, GPU vs CPU). From the
# repository root on the device (run tool, carry .devkit):
# bash docs/bench/s20_first.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
source docs/bench/gen_step_one.sh
six > $OUT/s20_defaults.txt 2>&1
six SE_GEN_SCALED=0 SE_GEN_FMAD=0 SE_GEN_HH_FOLD=0 SE_GEN_WARP_COST=5 > $OUT/s20_defaults_s17.txt 2>&1
for f in s20_defaults s20_defaults_s17; do
  echo "== $f"; grep -E "copy|cuda gen|rror" $OUT/$f.txt
done
S=$OUT/s20_weight.txt
one big-low,big-high SE_GEN_WARP_COST=5
one big-low,big-high
one big-low,big-high SE_GEN_WARP_COST=5
one big-low,big-high
L=SE_GEN_LITERALS=1
one medium-low,medium-high,big-low,big-high
G=SE_GEN_LITERALS=2
one medium-low,medium-high,big-low,big-high $L
one medium-low,medium-high,big-low,big-high $G
one medium-low,medium-high,big-low,big-high $G
one medium-low,medium-high,big-low,big-high $L
one medium-low,medium-high,big-low,big-high
grep -E "^==|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
echo "sweeps done at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && SE_TEST_GEN_HOST=0 timeout $((590 - SECONDS)) ctest -R engine_stream -V) > $OUT/engine_stream.txt 2>&1
echo "engine_stream rc $? at ${SECONDS}s"
grep -E "level guard|checks|FAIL|Passed|Failed" $OUT/engine_stream.txt | tail -6
echo "end at ${SECONDS}s"
