#!/bin/bash
# Session 4, call 5 (docs/tdbem.md Section 16, "Session 4, call 5"): the two device commands, run
# from the repository root on the H200 (outputs in $OUT, copied here with _s4_call5 names).
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=16
find CMakeLists.txt src io partition cuda include tests -type f -exec touch {} +
C="-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHDF5_ROOT=$HDF5_ROOT"
B="tdbem --n 6000 --kmax 150 --min-time 0.2 --hilbert --ng 1,8 --no-front"
if [ "${AB:-0}" != 1 ]; then
  # call 1: build, the tdbem GPU tests, the benchmark twice, Nsight Compute durations
  cmake -B build-dev $C >/dev/null &&
    cmake --build build-dev -j16 --target simengine-bench test_tdbem_gpu test_tdbem_gpu_run 2>&1 |
    grep -E "error|warning"
  (cd build-dev && timeout 45 ctest -R tdbem_gpu --output-on-failure -V 2>&1 |
    grep -E "relative|checks|Passed|Failed|skipped|rror|FAIL") > $OUT/tdbem_gpu_tests_s4_call5_h200.txt
  for i in 1 2; do
    timeout 30 build-dev/src/simengine-bench $B > $OUT/tdbem_bench_s4_call5_$i.txt 2>&1
  done
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  timeout 22 $NCU --clock-control none -k regex:"cb_pair_kernel|reduce_kernel" --section SpeedOfLight \
    build-dev/src/simengine-bench tdbem --n 6000 --kmax 150 --min-time 0 --hilbert --ng 8 \
    --no-front --precision single > $OUT/tdbem_ncu_s4_call5_h200.txt 2>&1
else
  # call 2 (AB=1): the committed code (s5_base/: d466a5e's cuda/tdbem_kernels.{cu,h} and
  # cuda/tdbem_cuda.c, a temporary folder of the working tree) against this call's, alternating
  mkdir -p /tmp/base && tar --exclude=./build-dev --exclude=./.devkit --exclude=./build \
    --exclude=./out --exclude=./.git -cf - . | tar -xf - -C /tmp/base && cp s5_base/* /tmp/base/cuda/
  cmake -B build-dev $C >/dev/null && cmake --build build-dev -j16 --target simengine-bench 2>&1 |
    grep -E "error|warning"
  (cd /tmp/base && cmake -B build-base $C >/dev/null &&
    cmake --build build-base -j16 --target simengine-bench 2>&1 | grep -E "error|warning")
  for i in 1 2 3; do
    for v in new base; do
      e=build-dev/src/simengine-bench
      [ $v = base ] && e=/tmp/base/build-base/src/simengine-bench
      timeout 25 $e $B --precision single > $OUT/tdbem_ab_s4_call5_${v}_$i.txt 2>&1
    done
  done
fi
