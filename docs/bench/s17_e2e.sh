#!/bin/bash
# Prepared in session 16 for the next session's first device call (about 6 minutes): e2e_gpu
# alone (every GPU run of simengine against the CPU path through the HDF5 output; not yet run
# with session 16's defaults: big-high's two levels of pieces, medium-low's prefetches). In
# session 16 it was started beside engine_stream and check.sh's 420 s ran out. From the
# repository root on the device (run tool, carry .devkit): bash docs/bench/s17_e2e.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && timeout 480 ctest -R e2e_gpu -V) > $OUT/e2e_gpu.txt 2>&1
echo "e2e_gpu rc $? at ${SECONDS}s"
grep -E "gen|Passed|Failed|FAIL" $OUT/e2e_gpu.txt | tail -20
