#!/bin/bash
# The TD-BEM GPU summation on the GPU machine (docs/tdbem.md Sections 12 and 16): builds
# build-dev, runs the tdbem GPU tests and simengine-bench tdbem on the recorded case
# (N 6000, kmax 150, Hilbert numbering) and once more single ng 8 (the run-to-run spread),
# leaving the outputs in $OUT. With AB=PATCH (a patch of the working tree, from the repository
# root) also the tree before it (a copy with PATCH reversed, built beside build-dev) against this
# one: three alternating runs each of simengine-bench tdbem on the case with AB_ARGS (default
# single ng 1 and 8). With PROFILE=1 also Nsight Compute on CB
# ng 8 (single, cb_pair_kernel): the details, the per-instruction source counters (CSV) and the
# SASS.
# Usage, from the repository root: [AB=PATCH [AB_ARGS=...]] [PROFILE=1] tools/device/tdbem_cb.sh
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=16
OUT=${OUT:-/tmp}
CASE="--n 6000 --kmax 150 --min-time 0.2 --hilbert"
if [ -n "${AB:-}" ]; then
  root=$PWD
  rm -rf /tmp/base && mkdir -p /tmp/base
  tar --exclude=./build-dev --exclude=./build --exclude=./.devkit --exclude=./.git -cf - . |
    tar -xf - -C /tmp/base
  (cd /tmp/base && patch -s -R -p1 -i "$root/$AB" &&
    cmake -B build-base -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DHDF5_ROOT="$HDF5_ROOT" >/dev/null &&
    cmake --build build-base -j8 --target simengine-bench) > $OUT/tdbem_ab_build.txt 2>&1 &
fi
tools/device/build.sh simengine-bench test_tdbem_gpu test_tdbem_gpu_run || exit 1 # no stale binaries
wait
(cd build-dev && ctest -R "tdbem_gpu" --output-on-failure -V 2>&1 |
  grep -E "relative|checks|Passed|Failed|skipped|rror|FAIL") > $OUT/tdbem_gpu_tests.txt
tail -4 $OUT/tdbem_gpu_tests.txt
timeout 150 stdbuf -oL build-dev/src/simengine-bench tdbem $CASE --csv $OUT/tdbem_bench.csv \
  > $OUT/tdbem_bench.txt 2>&1
grep -E "cb|copy|cusparse|rror" $OUT/tdbem_bench.txt
timeout 30 build-dev/src/simengine-bench tdbem $CASE --ng 8 --no-front --precision single \
  > $OUT/tdbem_bench_repeat.txt 2>&1
grep -E "cb  |copy" $OUT/tdbem_bench_repeat.txt
if [ -n "${AB:-}" ]; then
  for i in 1 2 3; do
    for v in new base; do
      e=build-dev/src/simengine-bench
      [ $v = base ] && e=/tmp/base/build-base/src/simengine-bench
      timeout 40 $e tdbem $CASE --no-front ${AB_ARGS:---ng 1,8 --precision single} \
        > $OUT/tdbem_ab_${v}_$i.txt 2>&1
      echo "$v $i: $(grep -E 'copy' $OUT/tdbem_ab_${v}_$i.txt | grep -oE '[0-9.]+ GB/s')"
      grep -E '^(single|double) +cb ' $OUT/tdbem_ab_${v}_$i.txt
    done
  done
fi
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
