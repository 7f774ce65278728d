# Device run 1 of session 5 for the Hines solve alone (docs/gpu-hines.md, "Session 5"): COOP with
# persistent warps (the next group's first chunks copied during the forward sweep), each
# chunk's stage refilled right after its loads (ST chunks in flight instead of ST - 1), byte
# offsets for the copies and x stores. Builds, runs the gpu_hines test, COOP against STREAM and
# the automatic choice at 256 000 neurons (4, 3 and 8 stages), the SASS of k_coop<8, 4, true>,
# ncu of COOP L 4 on medium-high. Run from the repository root on the device machine (the
# `run` tool, carry .devkit); writes into $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
B=build-dev/src/simengine-bench
T=$OUT/gpu_hines_test_s5_run1.txt
(cd build-dev && timeout 60 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|solves|automatic|tests passed|FAIL" $T | tail -24
P=block32-stream-t128-c2,block32-stream-t128-r0,block32-auto
C=block32-coop-l2,block32-coop-l4,block32-coop-l4-c2,block32-coop-l4-s3,block32-coop-l4-s8,block32-coop-l8,block32-coop-l8-s3,block32-coop-l8-s8
R=$OUT/gpu_hines_256000_s5_run1.txt
timeout 100 $B gpu-hines --sizes 256000 --min-time 0.03 --variants $P,$C \
  --csv $OUT/gpu_hines_256000_s5_run1.csv > $R 2>&1
echo "bench rc=$?" >> $R
grep -E "copy band|ok|n/a|FAIL|wrong|rc=" $R | awk '{print $1, $4, $5, $6, $7, $(NF-5), $NF}' | head -100
cuobjdump -sass $B 2>/dev/null | awk '/Function : .*k_coopILi8ELi4ELb1E/{p=1} p{print} p&&/\.\.\.\.\.\.\.\.\.\./{exit}' > $OUT/gpu_hines_sass_s5_run1.txt
wc -l $OUT/gpu_hines_sass_s5_run1.txt
N=$OUT/gpu_hines_ncu_s5_run1.txt
timeout 35 ncu --clock-control none -k regex:k_coop -c 1 --section SpeedOfLight \
  --section WarpStateStats --section Occupancy --section SchedulerStats \
  --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio \
  $B gpu-hines --classes medium-high --sizes 51200 --variants block32-coop-l4 --min-time 0 > $N 2>&1
grep -E "Duration|inst_executed|stalled|Issued Warp|Warp Cycles Per Issued|DRAM Through|block32" $N | head -24
