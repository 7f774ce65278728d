#!/bin/bash
# Session 4, device call 3 of the TD-BEM CB work (docs/tdbem.md Sections 15 and 16): build, the
# tdbem GPU tests and the benchmark (tools/device/tdbem_cb.sh), then, time allowing, the airplane
# end to end with the float pair format (the commands of tdbem_device3_h200.sh), a repeat of the
# benchmark at ng 1 and 8, and Nsight Compute on CB ng 8 single. Outputs under $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=16
find CMakeLists.txt src io partition cuda include tests -type f -exec touch {} +
D=$OUT; L=$D/tdbem_s4_call3_log.txt
cmake -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHDF5_ROOT=$HDF5_ROOT >/dev/null
cmake --build build-dev -j16 --target simengine-bench test_tdbem_gpu test_tdbem_gpu_run simengine \
  simengine-prep 2>&1 | grep -E "error|warning" | head >> $L
echo "built at ${SECONDS}s" >> $L
mkdir -p /tmp/o; OUT=/tmp/o tools/device/tdbem_cb.sh >> $L 2>&1
cp /tmp/o/tdbem_gpu_tests.txt /tmp/o/tdbem_bench.txt /tmp/o/tdbem_bench.csv $D
echo "benchmark done at ${SECONDS}s" >> $L
B=build-dev/src; A=$D/tdbem_airplane.txt
if [ $SECONDS -lt 200 ]; then
  P="$B/simengine-prep tdbem --shape airplane --n 23962 --kmax 341 --dmax 15 --mean-length 9.5 --steps 10823 --precision single -o /tmp/air.h5"
  echo "== $P" > $A; ( time $P ) >> $A 2>&1
  echo "== OMP_NUM_THREADS=16 mpirun -np 1 simengine /tmp/air.h5 --ng 8 --gpus 1 --gpu-fraction 1" >> $A
  ( time timeout 80 mpirun -x LD_LIBRARY_PATH -x OMP_NUM_THREADS --bind-to none -np 1 \
    $B/simengine /tmp/air.h5 -o /tmp/air.out.h5 --ng 8 --gpus 1 --gpu-fraction 1 ) 2>&1 |
    grep -vE "step [0-9]+/.*ETA" >> $A
  rm -f /tmp/air.h5 /tmp/air.out.h5*
fi
echo "airplane done at ${SECONDS}s" >> $L
[ $SECONDS -lt 225 ] && timeout 40 $B/simengine-bench tdbem --n 6000 --kmax 150 --min-time 0.2 \
  --hilbert --ng 1,8 --no-front > $D/tdbem_bench_repeat.txt 2>&1
echo "repeat done at ${SECONDS}s" >> $L
if [ $SECONDS -lt 225 ]; then
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  timeout 35 $NCU --clock-control none -k regex:cb_pair_kernel -c 1 --section SpeedOfLight \
    --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy \
    -o /tmp/cbf8 $B/simengine-bench tdbem --n 6000 --kmax 150 --min-time 0 --hilbert --ng 8 \
    --no-front --precision single > /dev/null 2>&1
  $NCU -i /tmp/cbf8.ncu-rep --page details > $D/tdbem_ncu_cb8_single.txt 2>&1
fi
echo "end at ${SECONDS}s" >> $L
