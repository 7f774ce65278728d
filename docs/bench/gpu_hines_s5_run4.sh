# Device run 4 of session 5 for the Hines solve alone (docs/gpu-hines.md, "Session 5, run 4"):
# COOP with 5 and 6 pipeline stages and the automatic stage count (as run: the deepest of 8, 6,
# 5 stages that keeps the warps of 4 stages; narrowed after this run to 6 or 5 where 4 stages
# give 4 or more warps).
# The gpu_hines test; 256 000 neurons: the automatic choice and COOP L 2/4/8 with explicit
# stages; the automatic choice at 25 600 and 2 560 neurons; ncu of COOP L 4 with 6 stages on
# medium-high at 51 200 neurons (compare docs/bench/gpu_hines_ncu_s5_run1.txt, 4 stages), and
# the per-instruction stall samples of COOP L 4 with 4 stages (SourceCounters). Run from the
# repository root on the device machine (the `run` tool, carry .devkit); writes into $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
B=build-dev/src/simengine-bench
T=$OUT/gpu_hines_test_s5_run4.txt
(cd build-dev && timeout 90 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|solves|automatic|tests passed|FAIL" $T | tail -16
V=block32-auto,block32-coop-l4-s4,block32-coop-l4-s5,block32-coop-l4-s6,block32-coop-l4-c2,block32-coop-l2-s4,block32-coop-l2-s5,block32-coop-l8-s4,block32-coop-l8-s3,block32-coop-l8-s8
R=$OUT/gpu_hines_256000_s5_run4.txt
timeout 100 $B gpu-hines --sizes 256000 --min-time 0.03 --variants $V \
  --csv $OUT/gpu_hines_256000_s5_run4.csv > $R 2>&1
echo "bench rc=$?" >> $R
grep -E "copy band|ok|n/a|FAIL|wrong|rc=" $R | cut -c1-13,37-62,75-115,130-140
R2=$OUT/gpu_hines_small_sizes_s5_run4.txt
timeout 40 $B gpu-hines --sizes 25600,2560 --min-time 0.02 \
  --variants block32-auto,block32-coop-l4-s4 > $R2 2>&1
echo "bench rc=$?" >> $R2
grep -E "copy band|ok|n/a|FAIL|wrong|rc=" $R2 | cut -c1-22,37-62,75-115,130-140
N=$OUT/gpu_hines_ncu_s5_run4.txt
timeout 40 ncu --clock-control none -k regex:k_coop -c 1 --section SpeedOfLight \
  --section WarpStateStats --section Occupancy --section SchedulerStats \
  --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio \
  $B gpu-hines --classes medium-high --sizes 51200 --variants block32-coop-l4-s6 --min-time 0 > $N 2>&1
grep -E "Duration|inst_executed|stalled|Issued Warp|Warp Cycles Per Issued|DRAM Through|block32" $N | head -24
P=$OUT/gpu_hines_ncu_source_s5_run4
timeout 60 ncu --clock-control none -k regex:k_coop -c 1 --section SourceCounters \
  --section WarpStateStats -o $P $B gpu-hines --classes medium-high --sizes 51200 \
  --variants block32-coop-l4-s4 --min-time 0 > $P.log 2>&1
timeout 30 ncu -i $P.ncu-rep --page source --csv --print-source sass > $P.csv 2>> $P.log
echo "source page rc=$?"; wc -c $P.csv; head -c 600 $P.csv; rm -f $P.ncu-rep
