#!/bin/bash
# The last device call of session 4: build (sources touched first, as tools/device/check.sh does),
# the TD-BEM benchmark on the recorded case, every gpu test (ctest -L gpu, e2e_gpu with all its
# runs), then the TD-BEM benchmark again (the single-precision target sits near 60%).
# Outputs under $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
find CMakeLists.txt src io partition cuda include tests -type f -exec touch {} +
cmake -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DHDF5_ROOT="$HDF5_ROOT" >/dev/null
cmake --build build-dev -j16 2>&1 | grep -E "error|warning:|Built target simengine$"
echo "built at ${SECONDS}s"
B=build-dev/src/simengine-bench
timeout 90 $B tdbem --n 6000 --kmax 150 --min-time 0.2 --hilbert --csv $OUT/tdbem_bench.csv \
  > $OUT/tdbem_bench.txt 2>&1
grep -E "device 0 copy|^(single|double) +(cb|cusparse)" $OUT/tdbem_bench.txt
echo "bench at ${SECONDS}s"
(cd build-dev && timeout $((530 - SECONDS)) ctest -L gpu -j4 --output-on-failure) 2>&1 |
  tee $OUT/gpu_tests.txt | grep -E "Test +#|tests passed|tests failed|Failed|Error"
echo "tests at ${SECONDS}s"
if [ $SECONDS -lt 545 ]; then
  timeout 40 $B tdbem --n 6000 --kmax 150 --min-time 0.2 --hilbert --ng 1,8 --no-front \
    > $OUT/tdbem_bench_repeat.txt 2>&1
  grep -E "device 0 copy|^(single|double) +cb" $OUT/tdbem_bench_repeat.txt
fi
echo "end at ${SECONDS}s"
