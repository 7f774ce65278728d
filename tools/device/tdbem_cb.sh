#!/bin/bash
# The TD-BEM GPU summation on the GPU machine (docs/tdbem.md Sections 12 and 16): builds
# build-dev, runs the tdbem GPU tests and simengine-bench tdbem on the recorded case
# (N 6000, kmax 150, Hilbert numbering), leaving the outputs in $OUT. With PROFILE=1 also Nsight
# Compute on CB ng 8 (single, cb_pair_kernel): the details, the per-instruction source counters
# (CSV) and the SASS.
# Usage, from the repository root: tools/device/tdbem_cb.sh
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=16
OUT=${OUT:-/tmp}
tools/device/build.sh simengine-bench test_tdbem_gpu test_tdbem_gpu_run
(cd build-dev && ctest -R "tdbem_gpu" --output-on-failure -V 2>&1 |
  grep -E "relative|checks|Passed|Failed|skipped|rror|FAIL") > $OUT/tdbem_gpu_tests.txt
tail -4 $OUT/tdbem_gpu_tests.txt
timeout 150 stdbuf -oL build-dev/src/simengine-bench tdbem --n 6000 --kmax 150 --min-time 0.2 \
  --hilbert --csv $OUT/tdbem_bench.csv > $OUT/tdbem_bench.txt 2>&1
grep -E "cb|copy|cusparse|rror" $OUT/tdbem_bench.txt
[ "${PROFILE:-0}" = 1 ] || exit 0
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 80 $NCU --clock-control none -k regex:cb_pair_kernel -c 1 --section SpeedOfLight \
  --section WarpStateStats --section InstructionStats --section SourceCounters \
  --section LaunchStats --section Occupancy -o $OUT/cbf8 \
  build-dev/src/simengine-bench tdbem --n 6000 --kmax 150 --min-time 0 --hilbert --ng 8 \
  --no-front --precision single > $OUT/ncu_cbf8.txt 2>&1
$NCU -i $OUT/cbf8.ncu-rep --page source --csv --print-source sass > $OUT/cbf8_source.csv 2>&1
$NCU -i $OUT/cbf8.ncu-rep --page details > $OUT/cbf8_details.txt 2>&1
grep -E "Duration|Executed Instructions  |Warp Cycles Per Issued|DRAM Through|Registers Per|Achieved Occ" \
  $OUT/cbf8_details.txt
