#!/bin/bash
# Prepared in session 20 for the next session's first device call, on an H200 if one comes
# (sessions 19 and 20 had only H100s, session 21 got no machine at all; 8-10 minutes, the ncu
# runs cut to the time left): builds everything; gen on the six classes and the six together at
# 256 000 cells with today's defaults (session 20: the literal table in shared memory above 512
# rows), then with session 19's (SE_GEN_LITERALS=0) and session 17's (also the scaled rows, FMA
# and the fold off, row weight 5) on the same card; medium-low, the class nearest 1.5x on the
# H200, with the literal table, with the shared-memory carveout at 70% (the 164 KiB
# configuration: 3 blocks of 49 KiB per multiprocessor, 92 KiB of L1) and at 86% (196 KiB: 4
# blocks, 60 KiB of L1, which the default may already be; SE_GEN_VERBOSE prints the blocks), with
# the hh rows in the warps through rhs (SE_GEN_WARP_HH=2) and with the rows weighted at W = 2
# (session 21, offline: two levels of pieces, 128 registers, no spills, the critical path 1944
# SASS instructions instead of 2223, because the rule's rows counted put all 22 dividing hh rows
# on warp 3; but 57 600 B of shared memory per block, so 3 blocks per multiprocessor) and W = 2
# with the y of each warp's last 34 rows in registers instead of 32 (55 552 B and 126 registers:
# 4 blocks, no spills, critical path 1892), A B C D E F G G F E D C B A, and SE_GEN_WARP_HH=2 on
# the other
# classes with hh rows; then Nsight Compute's stall breakdown, occupancy and L1 hit rate of
# medium-low's and big-low's step kernels (with the shared-memory configuration the driver took
# by default: 196 or 228 KiB for medium-low's 4 blocks).
# engine_stream's GPU part (session 20) ran today's kernels: both tables, all modes; its runs with
# SE_GEN_CARVEOUT=80 and SE_GEN_WARP_HH=2 (added after the last call) have not run on a GPU: the
# second call, docs/bench/s22_second.sh, runs them before either becomes a default.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s22_first.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
source docs/bench/gen_step_one.sh
six > $OUT/s22_defaults.txt 2>&1
six SE_GEN_LITERALS=0 > $OUT/s22_defaults_s19.txt 2>&1
six SE_GEN_LITERALS=0 SE_GEN_SCALED=0 SE_GEN_FMAD=0 SE_GEN_HH_FOLD=0 SE_GEN_WARP_COST=5 \
  > $OUT/s22_defaults_s17.txt 2>&1
for f in s22_defaults s22_defaults_s19 s22_defaults_s17; do
  echo "== $f"; grep -E "copy|cuda gen|rror" $OUT/$f.txt
done
echo "six done at ${SECONDS}s"
S=$OUT/s22_medium_low.txt
one medium-low
one medium-low SE_GEN_LITERALS=1
one medium-low SE_GEN_CARVEOUT=70
one medium-low SE_GEN_CARVEOUT=86
one medium-low SE_GEN_WARP_HH=2
one medium-low SE_GEN_WARP_COST=2
one medium-low SE_GEN_WARP_COST=2 SE_GEN_WARP_REG_ROWS=34
one medium-low SE_GEN_WARP_COST=2 SE_GEN_WARP_REG_ROWS=34
one medium-low SE_GEN_WARP_COST=2
one medium-low SE_GEN_WARP_HH=2
one medium-low SE_GEN_CARVEOUT=86
one medium-low SE_GEN_CARVEOUT=70
one medium-low SE_GEN_LITERALS=1
one medium-low
one small-low,small-high,medium-high,big-low,big-high SE_GEN_WARP_HH=2
one small-low,small-high,medium-high,big-low,big-high
grep -E "^==|cuda gen|blocks per|rror" $S | sed 's/ (at [0-9]*s)//'
echo "medium-low done at ${SECONDS}s"
for c in medium-low big-low; do # within the call's 600 s: each as long as is left, at most 100 s
  left=$((585 - SECONDS))
  [ $left -gt 40 ] || { echo "no time left for ncu on $c"; break; }
  ncu_step $((left < 100 ? left : 100)) $c $OUT/s22_ncu_$c.txt
  echo "$c: rc $? at ${SECONDS}s"
  grep -E "Stall|Warp Cycles|Eligible|Issued Warp|Achieved Occupancy|Registers|Block Limit|DRAM Throughput|Hit Rate|Shared Memory|rror" \
    $OUT/s22_ncu_$c.txt | head -40
done
echo "end at ${SECONDS}s"
