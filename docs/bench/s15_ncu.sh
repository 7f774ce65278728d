#!/bin/bash
# Prepared in session 14 for the next session (about 4 minutes): where gen's warp kernel spends
# its time on big-low (2.18x its byte floor with session 14's defaults: 8 warps per 32 cells,
# registers for 2 blocks per multiprocessor, 2.4 KB of spills; docs/gpu.md "What is left").
# Nsight Compute on one launch of the step kernel: warp states (stall reasons), scheduler,
# occupancy, memory workload; then the same for big-high (1.90x) and medium-low (1.77x, a thread
# per cell). First checks that ncu reads the counters (KINDS.md: yes on Firecracker, no on
# gVisor). From the repository root on the device (run tool, carry .devkit). Ran in session 15's
# second call with SE_GEN_WARP_REG_ROWS=48 exported for big-low and big-high, SE_GEN_WARPS=4
# SE_GEN_WARP_REG_ROWS=32 for medium-low (bench/s15_ncu_*_h200.txt): session 15's defaults since,
# so the plain script measures the same kernels now.
source .devkit/env.sh
tools/device/build.sh simengine-bench > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
source docs/bench/gen_step_one.sh
for c in big-low big-high medium-low; do
  ncu_step 150 $c $OUT/s15_ncu_$c.txt
  echo "$c: rc $? at ${SECONDS}s"
  grep -E "Stall|Warp Cycles|Eligible|Issued Warp|Achieved Occupancy|Registers|Memory Throughput|DRAM Throughput|Local|rror" \
    $OUT/s15_ncu_$c.txt | head -30
done
