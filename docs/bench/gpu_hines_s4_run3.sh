# Device run 3 of session 4 for the Hines solve alone (docs/gpu-hines.md, "COOP"): the gpu_hines
# test, COOP (1 and 2 bins per lane) against STREAM at 256 000 and 25 600 neurons, ncu of two
# COOP settings. Run from the repository root after building test_gpu_hines and simengine-bench
# in build-dev; writes into $OUT.
B=build-dev/src/simengine-bench
T=$OUT/gpu_hines_test_s4_run3.txt
(cd build-dev && timeout 90 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|solves|tests passed|Failed" $T | tail -6
P=block32-stream-t128-c2,block32-stream-t128-r0,block32-auto
C1=block32-coop-l2,block32-coop-l4,block32-coop-l4-c2,block32-coop-l8,block32-coop-l8-s2,block32-coop-l16,block32-coop-l16-s2
C2=block32-coop-l2-b2-s2,block32-coop-l2-b2,block32-coop-l2-b2-s2-c2,block32-coop-l4-b2-s2,block32-coop-l4-b2-s3,block32-coop-l4-b2,block32-coop-l4-b2-s2-c2,block32-coop-l8-b2-s2,block32-coop-l8-b2-s3,block32-coop-l8-b2,block32-coop-l16-b2-s2
timeout 110 $B gpu-hines --sizes 256000 --min-time 0.03 --variants $P,$C1,$C2 \
  --csv $OUT/gpu_hines_256000_s4_run3.csv > $OUT/gpu_hines_256000_s4_run3.txt 2>&1
echo "bench rc=$?" >> $OUT/gpu_hines_256000_s4_run3.txt
grep -E "copy band|ok|n/a|FAIL|wrong" $OUT/gpu_hines_256000_s4_run3.txt | awk '{print $1, $4, $5, $(NF-5), $NF}' | head -140
N=$OUT/gpu_hines_ncu_s4_run3.txt
for cv in medium-high:block32-coop-l4 medium-high:block32-coop-l4-b2-s2 big-high:block32-coop-l8-b2-s2; do
  echo "## ${cv%%:*} ${cv#*:} 51200" >> $N
  timeout 40 ncu --clock-control none -k regex:k_coop -c 1 --section SpeedOfLight \
    --section WarpStateStats --section Occupancy --section SchedulerStats \
    --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    $B gpu-hines --classes ${cv%%:*} --sizes 51200 --variants ${cv#*:} --min-time 0 >> $N 2>&1
done
grep -E "^## |Duration|inst_executed|Issued Warp|No Eligible|Achieved Active Warps|Warp Cycles Per Issued|DRAM Through" $N | head -40
timeout 40 $B gpu-hines --sizes 25600 --min-time 0.02 --variants $P,block32-coop-l4,block32-coop-l4-c2,block32-coop-l4-b2-s2,block32-coop-l8-b2-s2,block32-coop-l2-b2-s2,block32-coop-l16-b2-s2 \
  > $OUT/gpu_hines_25600_s4_run3.txt 2>&1
grep -E "ok|FAIL" $OUT/gpu_hines_25600_s4_run3.txt | awk '{print $1, $4, $(NF-5), $NF}' | head -60
