#!/bin/bash
# Prepared in session 18 (which got no device machine) for the next session's first device call
# (about 9 minutes): builds everything; gen's step at 256 000 cells on
# medium-low and big-low, A B C D E F F E D C B A: the defaults; scaled with FMA (big-low 23%
# fewer instructions, critical path 2078; medium-low 2399); FMA contraction alone (big-low's step
# kernel 14% fewer SASS instructions, its critical path 2706 -> 2371; medium-low 2851 -> 2608);
# the passive rows' literals scaled by 1 / d' alone (one multiplication and two uniform moves
# fewer per row); all three; the fold (the currents kernel
# writes a v + c + b, so the step kernel loads no v for split-off hh rows but the root: 8 B per
# row and step, about 3% of medium-low's byte floor, 1.4% of big-low's); then the hh rows computed by the warps
# (SE_GEN_WARP_HH=1) on the low classes with session 17's cheaper hh.h; medium-low with 5
# blocks per multiprocessor (registers for 5, the y of 40 rows per warp in registers so that 5
# blocks' shared memory fits; 208 B of spills) against 4; then engine_stream's GPU part with
# session 17's final rule (the rows that divide weighing 5 above 512 rows, the level guard at
# 128 B; it passed with weight 3), its GPU run of SE_GEN_HH_FOLD, and every gen kernel with
# SE_GEN_SCALED=1 and FMA contraction (SE_GEN_FMAD=1). From the repository root on the device (run tool,
# carry .devkit):
# bash docs/bench/s18_first.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s18_step.txt
source docs/bench/gen_step_one.sh
low=small-low,medium-low,big-low
g() { [ $SECONDS -lt 330 ] && one "$@"; }  # engine_stream's 245 s after them
F=SE_GEN_FMAD=1 C=SE_GEN_SCALED=1 H=SE_GEN_HH_FOLD=1
g medium-low,big-low
g medium-low,big-low $C $F
g medium-low,big-low $F
g medium-low,big-low $C
g medium-low,big-low $C $F $H
g medium-low,big-low $H
g medium-low,big-low $H
g medium-low,big-low $C $F $H
g medium-low,big-low $C
g medium-low,big-low $F
g medium-low,big-low $C $F
g medium-low,big-low
g $low SE_GEN_WARP_HH=1
g medium-low SE_GEN_WARP_MIN_BLOCKS=5 SE_GEN_WARP_REG_ROWS=40
g medium-low
grep -E "^==|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && SE_GEN_SCALED=1 SE_GEN_FMAD=1 SE_TEST_GEN_HOST=0 timeout $((590 - SECONDS)) ctest -R engine_stream -V) > $OUT/engine_stream.txt 2>&1
echo "engine_stream rc $? at ${SECONDS}s"
grep -E "level guard|checks|FAIL|Passed|Failed" $OUT/engine_stream.txt | tail -6
echo "end at ${SECONDS}s"
