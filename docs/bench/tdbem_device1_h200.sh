#!/bin/bash
# Device call 1 of the TD-BEM GPU work (docs/tdbem.md Sections 12-14, docs/performance.md):
# build, the tdbem GPU and balance tests, simengine-bench tdbem on the recorded case, and the
# dynamic CPU/GPU balancing (paper, rate) on a generated sphere. Outputs under $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHDF5_ROOT=$HDF5_ROOT >/dev/null
cmake --build build-dev -j16 --target simengine simengine-bench simengine-prep test_tdbem_gpu \
  test_tdbem_gpu_run test_tdbem_balance 2>&1 | grep -E "error|warning|Built target" | tail -12
(cd build-dev && ctest -R "tdbem_gpu|tdbem_balance" --output-on-failure -V 2>&1 |
  grep -E "relative|checks|Passed|Failed|skipped|rror|FAIL") > $OUT/tdbem_gpu_tests_h200.txt
cat $OUT/tdbem_gpu_tests_h200.txt
export OMP_NUM_THREADS=16
timeout 170 build-dev/src/simengine-bench tdbem --n 6000 --kmax 150 --min-time 0.2 --hilbert \
  --csv $OUT/tdbem_bench_h200.csv > $OUT/tdbem_bench_h200.txt 2>&1
grep -E "cb|copy|cusparse|fb32  *8|rror" $OUT/tdbem_bench_h200.txt
build-dev/src/simengine-prep tdbem --n 4000 --kmax 100 --steps 200 --precision single \
  -o /tmp/bal.h5 > /dev/null
for m in off paper rate; do
  echo "== simengine /tmp/bal.h5 --ng 8 --gpus 1 --balance $m --balance-iterations 10"
  mpirun -np 1 -x LD_LIBRARY_PATH -x OMP_NUM_THREADS --bind-to none build-dev/src/simengine \
    /tmp/bal.h5 -o /tmp/bal_$m.out.h5 --ng 8 --gpus 1 --balance $m --balance-iterations 10 2>&1
done > $OUT/tdbem_balance_h200.txt
grep -vE "step [0-9]+/" $OUT/tdbem_balance_h200.txt | head -60
