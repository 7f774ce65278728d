#!/bin/bash
# Device call 3 of the TD-BEM GPU work (docs/tdbem.md Section 15, docs/performance.md): build, the
# tdbem tests (GPU and CPU), the airplane end to end on 1 rank x 16 threads with the direct
# parallel read, the short CB runs and the float near field; then, time allowing, the same with
# OPENBLAS_NUM_THREADS=1. Outputs under $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHDF5_ROOT=$HDF5_ROOT >/dev/null
cmake --build build-dev -j16 --target simengine simengine-prep test_tdbem_gpu test_tdbem_gpu_run \
  test_tdbem_balance test_tdbem_io test_tdbem_m0 test_tdbem_sum 2>&1 | grep -E "error|warning" | head
echo "built at ${SECONDS}s"
(cd build-dev && timeout 120 ctest -R tdbem -j4 --output-on-failure 2>&1 | grep -vE "^ +Start") \
  > $OUT/tdbem_tests_h200.txt; tail -6 $OUT/tdbem_tests_h200.txt; echo "tested at ${SECONDS}s"
B=build-dev/src; M="mpirun -x LD_LIBRARY_PATH -x OMP_NUM_THREADS -x OPENBLAS_NUM_THREADS --bind-to none"
export OMP_NUM_THREADS=16
A=$OUT/tdbem_airplane_h200.txt
P="$B/simengine-prep tdbem --shape airplane --n 23962 --kmax 341 --dmax 15 --mean-length 9.5 --steps 10823 --precision single -o /tmp/air.h5"
echo "== $P" > $A; ( time $P ) >> $A 2>&1
run() { echo "== OMP_NUM_THREADS=$OMP_NUM_THREADS OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-unset} mpirun -np $1 simengine /tmp/air.h5 ${@:2}" >> $A
  ( time timeout 100 $M -np $1 $B/simengine /tmp/air.h5 -o /tmp/air.out.h5 "${@:2}" ) 2>&1 |
    grep -vE "step [0-9]+/.*ETA" >> $A; rm -f /tmp/air.out.h5*; tail -5 $A; }
run 1 --ng 8 --gpus 1 --gpu-fraction 1
echo "run 1 done at ${SECONDS}s"
if [ $SECONDS -lt 290 ]; then export OPENBLAS_NUM_THREADS=1; run 1 --ng 8 --gpus 1 --gpu-fraction 1; fi
echo "end at ${SECONDS}s"
