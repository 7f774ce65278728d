#!/bin/bash
# Session 16, third device call (about 7 minutes): gen's prefetches (SE_GEN_PREFETCH=D: each
# warp prefetches the loads of the row it eliminates D rows later). First Nsight Compute's
# whole stall breakdown (every smsp__average_warps_issue_stalled_* per issued instruction) of
# big-low's and small-low's step kernels with the defaults and with D = 8; then the six classes
# at 256 000 cells (times the byte floor): defaults, D = 4, 8, 16, D = 16 into L2, defaults
# again. From the repository root on the device (run tool, carry .devkit):
# bash docs/bench/s16_prefetch.sh
source .devkit/env.sh
tools/device/build.sh simengine-bench > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s16_prefetch.txt
source docs/bench/gen_step_one.sh
for c in big-low small-low; do
  for p in 0 8; do
    SE_GEN_PREFETCH=$p timeout 60 ncu --clock-control none --kernel-name regex:se_gen_step \
      --launch-skip 2 --launch-count 1 \
      --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      build-dev/src/simengine-bench step --classes $c --neurons 256000 --steps 4 --cpu 0 \
      --mixed 0 --huge-swc "" --only gen > $OUT/s16_stalls_${c}_p$p.txt 2>&1
    echo "== $c prefetch $p: rc $? at ${SECONDS}s"
    grep -E "stalled|duration|dram__" $OUT/s16_stalls_${c}_p$p.txt | awk '$NF+0 >= 0.5' |
      sed -e 's/smsp__average_warps_issue_stalled_//' -e 's/_per_issue_active.ratio//' |
      awk '{print "  " $1, $NF}' | tr '\n' ' '
    echo
  done
done
six=small-low,small-high,medium-low,medium-high,big-low,big-high
one $six
one $six SE_GEN_PREFETCH=4
one $six SE_GEN_PREFETCH=8
one $six SE_GEN_PREFETCH=16
one $six SE_GEN_PREFETCH=16 SE_GEN_PREFETCH_LEVEL=2
one $six
grep -E "^==|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
echo "end at ${SECONDS}s"
