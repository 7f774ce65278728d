#!/bin/bash
# Prepared in session 14 for the next session (about 3-4 minutes): gen's warp kernels with the y
# of the first S piece rows of each warp in shared memory instead of registers
# (SE_GEN_WARP_SMEM_ROWS=S, session 14, host-run in CI, not yet on a GPU). ptxas on the
# development machine (docs/bench/s14_ptxas_defaults.txt and docs/gpu.md "What is left"): at
# 128 registers big-high's spills go from 2.1 KB to 320 B at S = 32 and to none at S = 64, big-low's
# from 2.4 KB to 1.2 KB and 0.8 KB (warp 0's trunk stays in registers); medium-high falls from
# 214 to 128 registers at S = 48. Times the byte floor at 256 000 cells, session 14's defaults
# otherwise. From the repository root on the device (run tool, carry .devkit).
source .devkit/env.sh
tools/device/build.sh simengine-bench > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s15_smem.txt
for rows in 0 16 32 48 64; do
  echo "== SE_GEN_WARP_SMEM_ROWS=$rows (at ${SECONDS}s)" >> $S
  SE_GEN_WARP_SMEM_ROWS=$rows SE_GEN_VERBOSE=1 timeout 60 build-dev/src/simengine-bench step \
    --classes medium-high,big-low,big-high --six 256000 --neurons 256000 --steps 10 --cpu 0 \
    --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
grep -E "^==|cuda gen|rror" $S | sed 's/(at [0-9]*s)//'
echo "end at ${SECONDS}s"
