# Device run 5 of session 4 for the Hines solve alone (docs/gpu-hines.md): COOP without the
# two-bins setting, each lane copying its own bin's inputs (one table offset per step, whole
# 16-byte pieces without a zero-fill size), the refitted automatic choice. The gpu_hines test,
# COOP against STREAM and the automatic rows at 256 000 neurons (3 and 2 stages: more warps per
# SM), ncu of COOP L 4 on medium-high and the SASS of that kernel. Run from the repository root
# after building test_gpu_hines and simengine-bench in build-dev; writes into $OUT.
B=build-dev/src/simengine-bench
T=$OUT/gpu_hines_test_s4_run5.txt
(cd build-dev && timeout 60 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|solves|automatic|tests passed|FAIL" $T | tail -24
P=block32-stream-t128-c2,block32-stream-t128-r0,block32-auto,full-auto
C=block32-coop-l2,block32-coop-l4,block32-coop-l4-c2,block32-coop-l4-s3,block32-coop-l4-s2,block32-coop-l8,block32-coop-l8-s3,block32-coop-l8-s2
R=$OUT/gpu_hines_256000_s4_run5.txt
timeout 80 $B gpu-hines --sizes 256000 --min-time 0.03 --variants $P,$C \
  --csv $OUT/gpu_hines_256000_s4_run5.csv > $R 2>&1
echo "bench rc=$?" >> $R
grep -E "copy band|ok|n/a|FAIL|wrong|rc=" $R | awk '{print $1, $4, $5, $6, $7, $(NF-5), $NF}' | head -100
cuobjdump -sass $B 2>/dev/null | awk '/Function : .*k_coopILi8ELi4ELb1E/{p=1} p{print} p&&/\.\.\.\.\.\.\.\.\.\./{exit}' > $OUT/gpu_hines_sass_s4_run5.txt
wc -l $OUT/gpu_hines_sass_s4_run5.txt
N=$OUT/gpu_hines_ncu_s4_run5.txt
timeout 35 ncu --clock-control none -k regex:k_coop -c 1 --section SpeedOfLight \
  --section WarpStateStats --section Occupancy --section SchedulerStats \
  --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio \
  $B gpu-hines --classes medium-high --sizes 51200 --variants block32-coop-l4 --min-time 0 > $N 2>&1
grep -E "Duration|inst_executed|stalled|Issued Warp|Warp Cycles Per Issued|DRAM Through|block32" $N | head -20
