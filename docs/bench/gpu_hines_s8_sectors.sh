#!/bin/bash
# Device run (session 8): why 8-lane COOP plans stop near 62% of copy whatever their warps
# (docs/gpu-hines.md "Session 8"). At L 8 a warp's G = 4 systems are one 32-byte sector per row
# and array (at L 4, 64 bytes). ncu counts the DRAM bytes and shared-memory bank conflicts of
# big-high L 8 and medium-high L 4; then A B rows with the driver's L2 fetch granularity, 32 and
# 128 bytes (--l2-fetch), and a build whose cp.async copies ask L2 for 128-byte prefetches
# (-DSE_CP_ASYNC_L2_PREFETCH).
# The build flag -DSE_CP_ASYNC_L2_PREFETCH put .L2::128B on every cp.async.cg of that build (the
# flag is gone: the COOP Hines kernel's copies carry the hint since, copy16_async_l2).
# Run from the repository root (the `run` tool, carry .devkit); writes into $OUT.
source .devkit/env.sh
tools/device/build.sh simengine-bench || { echo "build failed"; exit 1; }
cmake -B build-pf -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DHDF5_ROOT="$HDF5_ROOT" -DCMAKE_CUDA_FLAGS="-DSE_CP_ASYNC_L2_PREFETCH" > /dev/null &&
  cmake --build build-pf -j16 --target simengine-bench > $OUT/build_pf.log 2>&1 || echo "prefetch build failed"
echo "builds done at ${SECONDS}s"
B=build-dev/src/simengine-bench
N=$OUT/gpu_hines_ncu_s8_sectors.txt
for v in "big-high block32-coop-l8-s6" "big-high block32-coop-l4-s6" "medium-high block32-coop-l4-s6" "medium-high block32-coop-l8-s6"; do
  set -- $v
  echo "== ncu $1 $2" >> $N
  timeout 60 ncu --clock-control none -k regex:k_coop -c 1 \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum \
    $B gpu-hines --classes $1 --sizes 51200 --variants $2 --min-time 0 >> $N 2>&1
done
grep -E "^==|duration|inst_executed|dram__|lts__|l1tex__|block32" $N | cut -c1-120
echo "ncu done at ${SECONDS}s"
R=$OUT/gpu_hines_256000_s8_sectors.txt
bench() { # label binary args...
  local label=$1 bin=$2; shift 2
  if [ $SECONDS -gt 520 ]; then echo "== $label: skipped (time)" >> $R; return; fi
  echo "== $label (at ${SECONDS}s)" >> $R
  timeout 90 $bin gpu-hines --sizes 256000 --min-time 0.1 --classes big-low,big-high,medium-high \
    --variants block32-coop-l8-s6,block32-coop-l4-s6 "$@" >> $R 2>&1
  echo "rc=$?" >> $R
}
bench "default" $B
bench "L2 fetch 32 B" $B --l2-fetch 32
bench "L2 fetch 128 B" $B --l2-fetch 128
bench "cp.async .L2::128B" build-pf/src/simengine-bench
bench "default again" $B
bench "cp.async .L2::128B again" build-pf/src/simengine-bench
echo "bench done at ${SECONDS}s"
grep -E "^==|L2 fetch|ok|n/a|FAIL|wrong|rc=|error" $R | cut -c1-12,37-128
