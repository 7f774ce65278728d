#!/bin/bash
# Session 18's first device call (about 9 minutes): builds everything; engine_stream's GPU part
# with session 17's final rule (the rows that divide weighing 5 above 512 rows, the level guard
# at 128 B; it passed with weight 3) and its GPU run of SE_GEN_HH_FOLD; then gen's step at
# 256 000 cells on medium-low and big-low: the fold (the currents kernel writes a v + c + b, so
# the step kernel loads no v for split-off hh rows but the root: 8 B per row and step, about 3%
# of medium-low's byte floor, 1.4% of big-low's), FMA contraction (SE_GEN_FMAD=1: 14% fewer
# instructions in big-low's step kernel, its critical path 2706 -> 2371; medium-low 2851 ->
# 2608) and both, against the defaults, A B C D B C A; the hh rows computed by the warps
# (SE_GEN_WARP_HH=1) on the low classes with session 17's cheaper hh.h; medium-low with 5
# blocks per multiprocessor (registers for 5, the y of 40 rows per warp in registers so that
# 5 blocks' shared memory fits; 208 B of spills) against 4; Nsight Compute's stall breakdown of
# big-low's step kernel if time is left. From the repository root on the device (run tool,
# carry .devkit):
# bash docs/bench/s18_first.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && SE_TEST_GEN_HOST=0 timeout 330 ctest -R engine_stream -V) > $OUT/engine_stream.txt 2>&1
echo "engine_stream rc $? at ${SECONDS}s"
grep -E "level guard|checks|FAIL|Passed|Failed" $OUT/engine_stream.txt | tail -6
S=$OUT/s18_fold.txt
source docs/bench/gen_step_one.sh
low=small-low,medium-low,big-low
one medium-low,big-low
one medium-low,big-low SE_GEN_HH_FOLD=1
one medium-low,big-low SE_GEN_FMAD=1
one medium-low,big-low SE_GEN_FMAD=1 SE_GEN_HH_FOLD=1
one medium-low,big-low SE_GEN_HH_FOLD=1
one medium-low,big-low SE_GEN_FMAD=1
one medium-low,big-low
one $low SE_GEN_WARP_HH=1
one medium-low SE_GEN_WARP_MIN_BLOCKS=5 SE_GEN_WARP_REG_ROWS=40
one medium-low
grep -E "^==|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
for c in big-low; do
  [ $SECONDS -lt 520 ] || break
  timeout 50 ncu --clock-control none --kernel-name regex:se_gen_step --launch-skip 2 \
    --launch-count 1 \
    --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    build-dev/src/simengine-bench step --classes $c --neurons 256000 --steps 4 --cpu 0 \
    --mixed 0 --huge-swc "" --only gen > $OUT/s18_stalls_$c.txt 2>&1
  echo "== $c stalls: rc $? at ${SECONDS}s"
  grep -E "stalled|duration|dram__" $OUT/s18_stalls_$c.txt | awk '$NF+0 >= 0.5' |
    sed -e 's/smsp__average_warps_issue_stalled_//' -e 's/_per_issue_active.ratio//' |
    awk '{print "  " $1, $NF}' | tr '\n' ' '
  echo
done
echo "end at ${SECONDS}s"
