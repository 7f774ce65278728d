# Ran with docs/bench/gpu_hines_s5_run3_two_streams_rejected.patch applied to the tree of commit
# d8ecc7f (the -i2 variants exist only with that patch; it was reverted after this run).
# Device run 3 of session 5 for the Hines solve alone (docs/gpu-hines.md, "Session 5, run 3"):
# COOP with two row streams per lane on the lower levels (se_hines_coop_config.streams = 2,
# variant suffix -i2: the two steps of a chunk are rows of independent subtrees, so their
# reciprocal chains overlap) against one stream (run 2's kernel). The gpu_hines test, then
# 256 000 neurons: the automatic choice (still one stream) and COOP L 2/4/8 with one and two
# streams, then ncu of COOP L 4 with two streams on medium-high at 51 200 neurons (compare
# docs/bench/gpu_hines_ncu_s5_run1.txt). Run from the repository root on the device machine
# (the `run` tool, carry .devkit); writes into $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
B=build-dev/src/simengine-bench
T=$OUT/gpu_hines_test_s5_run3.txt
(cd build-dev && timeout 90 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|solves|automatic|tests passed|FAIL" $T | tail -16
V=block32-auto,block32-coop-l4,block32-coop-l4-i2,block32-coop-l4-c2-i2,block32-coop-l2-i2,block32-coop-l8,block32-coop-l8-i2,block32-coop-l8-s3-i2
R=$OUT/gpu_hines_256000_s5_run3.txt
timeout 100 $B gpu-hines --sizes 256000 --min-time 0.03 --variants $V \
  --csv $OUT/gpu_hines_256000_s5_run3.csv > $R 2>&1
echo "bench rc=$?" >> $R
grep -E "copy band|ok|n/a|FAIL|wrong|rc=" $R | awk '{print $1, $4, $5, $6, $7, $(NF-5), $NF}' | head -60
N=$OUT/gpu_hines_ncu_s5_run3.txt
timeout 40 ncu --clock-control none -k regex:k_coop -c 1 --section SpeedOfLight \
  --section WarpStateStats --section Occupancy --section SchedulerStats \
  --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio \
  $B gpu-hines --classes medium-high --sizes 51200 --variants block32-coop-l4-i2 --min-time 0 > $N 2>&1
grep -E "Duration|inst_executed|stalled|Issued Warp|Warp Cycles Per Issued|DRAM Through|block32" $N | head -24
