# Device run 4 of session 4 for the Hines solve alone (docs/gpu-hines.md): after run 3, COOP with
# 16-byte cell accesses and the automatic choice between STREAM and COOP. The gpu_hines test,
# COOP against STREAM and the automatic row at 256 000, 25 600 and 2 560 neurons, ncu of COOP
# L 4 on medium-high. Run from the repository root after building test_gpu_hines and
# simengine-bench in build-dev; writes into $OUT.
B=build-dev/src/simengine-bench
T=$OUT/gpu_hines_test_s4_run4.txt
(cd build-dev && timeout 90 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|solves|automatic|tests passed|FAIL" $T | tail -24
P=block32-stream-t128-c2,block32-stream-t128-r0,block32-auto
C=block32-coop-l2,block32-coop-l2-c2,block32-coop-l4,block32-coop-l4-c2,block32-coop-l8,block32-coop-l8-c2,block32-coop-l16,block32-coop-l4-b2,block32-coop-l4-b2-s3,block32-coop-l8-b2-s3,full-auto,full-coop-l4-c2
timeout 90 $B gpu-hines --sizes 256000 --min-time 0.03 --variants $P,$C \
  --csv $OUT/gpu_hines_256000_s4_run4.csv > $OUT/gpu_hines_256000_s4_run4.txt 2>&1
echo "bench rc=$?" >> $OUT/gpu_hines_256000_s4_run4.txt
grep -E "copy band|ok|n/a|FAIL|wrong" $OUT/gpu_hines_256000_s4_run4.txt | awk '{print $1, $4, $5, $6, $7, $(NF-5), $NF}' | head -100
timeout 50 $B gpu-hines --sizes 25600,2560 --min-time 0.02 --variants $P,block32-coop-l2,block32-coop-l4-c2,block32-coop-l8 \
  > $OUT/gpu_hines_small_sizes_s4_run4.txt 2>&1
grep -E "ok|FAIL" $OUT/gpu_hines_small_sizes_s4_run4.txt | awk '{print $1, $2, $4, $5, $6, $7, $(NF-5), $NF}' | head -80
N=$OUT/gpu_hines_ncu_s4_run4.txt
timeout 40 ncu --clock-control none -k regex:k_coop -c 1 --section SpeedOfLight \
  --section WarpStateStats --section Occupancy --section SchedulerStats \
  --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio \
  $B gpu-hines --classes medium-high --sizes 51200 --variants block32-coop-l4 --min-time 0 > $N 2>&1
grep -E "Duration|inst_executed|stalled|Issued Warp|Warp Cycles Per Issued|DRAM Through" $N | head -20
