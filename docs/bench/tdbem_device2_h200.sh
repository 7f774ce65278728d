#!/bin/bash
# Device call 2 of the TD-BEM GPU work (docs/tdbem.md Sections 12-14, docs/performance.md): the
# tests, simengine-bench tdbem on the recorded case, the airplane end to end (1 rank; 4 ranks
# sharing the GPU with MUMPS on all 4 and on 1 rank), the balancing runs. Outputs under $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHDF5_ROOT=$HDF5_ROOT >/dev/null
cmake --build build-dev -j16 --target simengine simengine-bench simengine-prep test_tdbem_gpu \
  test_tdbem_gpu_run test_tdbem_balance 2>&1 | grep -E "error|warning" | head
(cd build-dev && ctest -R "tdbem_gpu|tdbem_balance" --output-on-failure -V 2>&1 |
  grep -E "relative|checks|Passed|Failed|skipped|rror|FAIL|known|radiation") > $OUT/tdbem_gpu_tests_h200.txt
cat $OUT/tdbem_gpu_tests_h200.txt | grep -E "checks|Failed|FAIL|rror"
B=build-dev/src; M="mpirun -x LD_LIBRARY_PATH -x OMP_NUM_THREADS --bind-to none"
export OMP_NUM_THREADS=16
A=$OUT/tdbem_airplane_h200.txt
P="$B/simengine-prep tdbem --shape airplane --n 23962 --kmax 341 --dmax 15 --mean-length 9.5 --steps 10823 --precision single -o /tmp/air.h5"
echo "== $P" > $A; ( time $P ) >> $A 2>&1
run() { echo "== OMP_NUM_THREADS=$OMP_NUM_THREADS mpirun -np $1 simengine /tmp/air.h5 ${@:2}" >> $A
  ( time timeout 110 $M -np $1 $B/simengine /tmp/air.h5 -o /tmp/air.out.h5 "${@:2}" ) 2>&1 |
    grep -vE "step [0-9]+/.*ETA" >> $A; rm -f /tmp/air.out.h5*; tail -4 $A; }
run 1 --ng 8 --gpus 1 --gpu-fraction 1
export OMP_NUM_THREADS=4
run 4 --ng 8 --gpus 1 --gpu-fraction 1
run 4 --ng 8 --gpus 1 --gpu-fraction 1 --m0-ranks 1
rm -f /tmp/air.h5
export OMP_NUM_THREADS=16
timeout 100 $B/simengine-bench tdbem --n 6000 --kmax 150 --min-time 0.2 --hilbert \
  --csv $OUT/tdbem_bench_h200.csv > $OUT/tdbem_bench_h200.txt 2>&1
grep -E " cb |copy|cusparse|fb32  *8" $OUT/tdbem_bench_h200.txt
$B/simengine-prep tdbem --n 4000 --kmax 100 --steps 200 --precision single -o /tmp/bal.h5 >/dev/null
for m in paper rate; do
  echo "== simengine /tmp/bal.h5 --ng 8 --gpus 1 --balance $m --balance-iterations 10"
  timeout 40 $M -np 1 $B/simengine /tmp/bal.h5 -o /tmp/bal_$m.out.h5 --ng 8 --gpus 1 --balance $m \
    --balance-iterations 10 2>&1
done > $OUT/tdbem_balance_h200.txt
grep -vE "step [0-9]+/" $OUT/tdbem_balance_h200.txt | grep -E "iteration (1|2|3|10):|times" | head -12
