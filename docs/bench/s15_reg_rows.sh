#!/bin/bash
# Prepared in session 14 for the next session (about 4 minutes): gen's warp kernels with each
# warp's y in registers for only the last R rows it eliminates (warp 0's trunk included), the
# earlier ones in shared memory (SE_GEN_WARP_REG_ROWS=R, session 14, host-run in CI, not yet on a
# GPU). ptxas on the development machine (docs/gpu.md "What is left"), 128 registers: big-low's
# spills 2.4 KB -> 384 B at R = 64 -> none at R = 48; big-high's 2.1 KB -> 464 B -> none;
# medium-high (4 warps, no spills) 214 -> 124 registers at R = 48 and 96 at R = 32, so more
# blocks per multiprocessor. Times the byte floor at 256 000 cells, session 14's defaults
# otherwise (-1: every y in registers, the default). From the repository root on the device (run
# tool, carry .devkit). Ran in session 15's first call (bench/s15_reg_rows_h200.txt), before the
# rule it led to: -1 now means the rule, and 1024 keeps every y in registers.
source .devkit/env.sh
tools/device/build.sh simengine-bench > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s15_reg_rows.txt
for rows in -1 64 48 32 24; do
  echo "== SE_GEN_WARP_REG_ROWS=$rows (at ${SECONDS}s)" >> $S
  SE_GEN_WARP_REG_ROWS=$rows SE_GEN_VERBOSE=1 timeout 60 build-dev/src/simengine-bench step \
    --classes medium-high,big-low,big-high --six 256000 --neurons 256000 --steps 10 --cpu 0 \
    --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
# medium-low with 4 warps (by default a thread per cell: its chains wanted more warps per
# multiprocessor than 224 registers allow; ptxas: 168 / 128 / 96 registers at R = 48 / 32 / 16)
for rows in -1 48 32 16; do
  echo "== SE_GEN_WARPS=4 SE_GEN_WARP_REG_ROWS=$rows (at ${SECONDS}s)" >> $S
  SE_GEN_WARPS=4 SE_GEN_WARP_REG_ROWS=$rows SE_GEN_VERBOSE=1 timeout 40 \
    build-dev/src/simengine-bench step --classes medium-low --neurons 256000 --steps 10 --cpu 0 \
    --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
grep -E "^==|cuda gen|rror|shared per block" $S | sed 's/(at [0-9]*s)//' | cut -c1-300
echo "end at ${SECONDS}s"
