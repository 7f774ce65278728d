#!/bin/bash
# Last device call of session 11 (about 4 minutes of device time were left): after the cell count
# became a kernel argument and the cubin cache was added, e2e_gpu's gen runs twice (the second
# finds the kernels in the cache: SE_GEN_VERBOSE says so), then gen on small-high and medium-high
# at 256 000 cells against s11_final.sh's numbers.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s11_check_cache.sh
source .devkit/env.sh
tools/device/build.sh simengine simengine-prep compare_outputs simengine-bench ||
  { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 SE_GEN_CACHE=/tmp/se_gen_cache
R=$OUT/s11_check_cache.txt
for pass in 1 2; do
  echo "== e2e_gpu gen runs, pass $pass" >> $R
  (cd build-dev && SE_E2E_GPU_RUNS="gen-small-low gen-medium-high gen-swc" \
    ctest -R e2e_gpu --output-on-failure -V) 2>&1 | grep -E "gen|passed|failed" >> $R
done
echo "== step" >> $R
SE_GEN_VERBOSE=1 timeout 60 build-dev/src/simengine-bench step --classes small-high,medium-high \
  --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $R 2>&1
cat $R
echo "end at ${SECONDS}s"
