#!/bin/bash
# Session 3, device call 5: CB with a 4 KB ring for float values (more warps per multiprocessor),
# byte offsets, one-subtraction window slots: build, tdbem GPU tests, simengine-bench tdbem.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHDF5_ROOT=$HDF5_ROOT >/dev/null
cmake --build build-dev -j16 --target simengine-bench test_tdbem_gpu test_tdbem_gpu_run 2>&1 |
  grep -E "error|Built target simengine-bench" | tail -5
(cd build-dev && ctest -R "tdbem_gpu" --output-on-failure -V 2>&1 |
  grep -E "relative|checks|Passed|Failed|skipped|rror|FAIL") > $OUT/tdbem_gpu_tests.txt
tail -4 $OUT/tdbem_gpu_tests.txt
export OMP_NUM_THREADS=16
timeout 200 build-dev/src/simengine-bench tdbem --n 6000 --kmax 150 --min-time 0.2 --hilbert \
  --csv $OUT/tdbem_bench.csv > $OUT/tdbem_bench.txt 2>&1
grep -E "cb|copy|cusparse|rror" $OUT/tdbem_bench.txt
