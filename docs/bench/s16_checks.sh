#!/bin/bash
# Session 16, second device call (about 7 minutes): every gpu test but e2e_gpu
# (tools/device/check.sh -E e2e_gpu; the first GPU run of the second level's guard: the default
# takes 2 levels only where the two-level kernel uses no local memory, engine_stream's
# check_gen_level_guard), then gen's defaults on the six classes and the six together at 256 000
# cells (times the byte floor; SE_GEN_VERBOSE names the levels each kernel took), then Nsight
# Compute on big-low's step kernel with the default (1 level after the guard) and with
# SE_GEN_WARP_LEVELS=2 forced (spills 96 B per thread): stall reasons, local-memory traffic.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s16_checks.sh
source .devkit/env.sh
timeout 360 tools/device/check.sh -E e2e_gpu; echo "check.sh rc $? at ${SECONDS}s"
grep -E "Test +#|tests passed|tests failed|level guard" $OUT/gpu_tests.txt | tail -16
SE_GEN_VERBOSE=1 timeout 100 build-dev/src/simengine-bench step --six 256000 --neurons 256000 \
  --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen > $OUT/s16_defaults.txt 2>&1
grep -E "copy|cuda gen|rror|level" $OUT/s16_defaults.txt | cut -c1-400
for L in default 2; do
  [ $SECONDS -gt 480 ] && break
  env $([ $L = 2 ] && echo SE_GEN_WARP_LEVELS=2) timeout 100 ncu --clock-control none \
    --kernel-name regex:se_gen_step --launch-skip 2 --launch-count 1 --section WarpStateStats \
    --section MemoryWorkloadAnalysis --section SpeedOfLight --section LaunchStats \
    --metrics l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,smsp__inst_executed.sum \
    build-dev/src/simengine-bench step --classes big-low --neurons 256000 --steps 4 --cpu 0 \
    --mixed 0 --huge-swc "" --only gen > $OUT/s16_ncu_big-low_L$L.txt 2>&1
  echo "big-low levels $L: rc $? at ${SECONDS}s"
  grep -E "Stall|Warp Cycles|Issued Warp|Registers|DRAM Throughput|local|inst_executed|Duration|rror" \
    $OUT/s16_ncu_big-low_L$L.txt | head -24
done
echo "end at ${SECONDS}s"
