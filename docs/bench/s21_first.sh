#!/bin/bash
# Prepared in session 20 for the next session's first device call, on an H200 if one comes
# (sessions 19 and 20 had only H100s; 8-10 minutes, the ncu runs cut to the time left): builds everything; gen on the six classes
# and the six together at 256 000 cells with today's defaults (session 20: the literal table in
# shared memory above 512 rows), then with session 19's (SE_GEN_LITERALS=0) and session 17's
# (also the scaled rows, FMA and the fold off, row weight 5) on the same card; medium-low, the
# class nearest 1.5x on the H200, with the literal table, with the shared-memory carveout at 80%
# (3 blocks per multiprocessor, more L1) and with the hh rows in the warps through rhs
# (SE_GEN_WARP_HH=2), A B C D D C B A, and the last on the other classes with hh rows; then
# Nsight Compute's stall breakdown, occupancy and L1 hit rate of medium-low's and big-low's step
# kernels.
# engine_stream's GPU part (session 20) ran today's kernels: both tables, all modes; its run with
# SE_GEN_CARVEOUT=80 and SE_GEN_WARP_HH=2 (added after the last call) have not run on a GPU: run
# ctest -R engine_stream before making either a default.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s21_first.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
source docs/bench/gen_step_one.sh
six > $OUT/s21_defaults.txt 2>&1
six SE_GEN_LITERALS=0 > $OUT/s21_defaults_s19.txt 2>&1
six SE_GEN_LITERALS=0 SE_GEN_SCALED=0 SE_GEN_FMAD=0 SE_GEN_HH_FOLD=0 SE_GEN_WARP_COST=5 \
  > $OUT/s21_defaults_s17.txt 2>&1
for f in s21_defaults s21_defaults_s19 s21_defaults_s17; do
  echo "== $f"; grep -E "copy|cuda gen|rror" $OUT/$f.txt
done
echo "six done at ${SECONDS}s"
S=$OUT/s21_medium_low.txt
one medium-low
one medium-low SE_GEN_LITERALS=1
one medium-low SE_GEN_CARVEOUT=80
one medium-low SE_GEN_WARP_HH=2
one medium-low SE_GEN_WARP_HH=2
one medium-low SE_GEN_CARVEOUT=80
one medium-low SE_GEN_LITERALS=1
one medium-low
one small-low,small-high,medium-high,big-low,big-high SE_GEN_WARP_HH=2
one small-low,small-high,medium-high,big-low,big-high
grep -E "^==|cuda gen|blocks per|rror" $S | sed 's/ (at [0-9]*s)//'
echo "medium-low done at ${SECONDS}s"
for c in medium-low big-low; do # within the call's 600 s: each as long as is left, at most 100 s
  left=$((585 - SECONDS))
  [ $left -gt 40 ] || { echo "no time left for ncu on $c"; break; }
  ncu_step $((left < 100 ? left : 100)) $c $OUT/s21_ncu_$c.txt
  echo "$c: rc $? at ${SECONDS}s"
  grep -E "Stall|Warp Cycles|Eligible|Issued Warp|Achieved Occupancy|Registers|Block Limit|DRAM Throughput|Hit Rate|rror" \
    $OUT/s21_ncu_$c.txt | head -32
done
echo "end at ${SECONDS}s"
