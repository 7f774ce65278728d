#!/bin/bash
# The last device calls of session 5, in two parts (one call each, the machine kept warm between):
#   bash docs/bench/final_s5_h200.sh tests     build (sources touched first) and every gpu test
#                                             (ctest -L gpu, e2e_gpu with all its runs)
#   bash docs/bench/final_s5_h200.sh airplane  the airplane end to end (the TD-BEM issue's
#                                             whole-run target, first run with session 5's shared
#                                             history windows), then the automatic Hines rows at
#                                             256 000 neurons (the committed COOP of run 5)
# Outputs under $OUT. Run from the repository root.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=build-dev/src
if [ "$1" = tests ]; then
  tools/device/build.sh
  echo "built at ${SECONDS}s"
  (cd build-dev && timeout $((580 - SECONDS)) ctest -L gpu -j4 --output-on-failure) 2>&1 |
    tee $OUT/gpu_tests.txt | grep -E "Test +#|tests passed|tests failed|Failed|Error"
  echo "tests at ${SECONDS}s"
  exit 0
fi
tools/device/build.sh simengine simengine-prep simengine-bench
echo "built at ${SECONDS}s"
export OMP_NUM_THREADS=16
A=$OUT/tdbem_airplane.txt
P="$B/simengine-prep tdbem --shape airplane --n 23962 --kmax 341 --dmax 15 --mean-length 9.5 --steps 10823 --precision single -o /tmp/air.h5"
echo "== $P" > $A; ( time $P ) >> $A 2>&1
echo "== OMP_NUM_THREADS=16 mpirun -np 1 simengine /tmp/air.h5 --ng 8 --gpus 1 --gpu-fraction 1" >> $A
( time timeout 150 mpirun -x LD_LIBRARY_PATH -x OMP_NUM_THREADS --bind-to none -np 1 \
  $B/simengine /tmp/air.h5 -o /tmp/air.out.h5 --ng 8 --gpus 1 --gpu-fraction 1 ) 2>&1 |
  grep -vE "step [0-9]+/.*ETA" >> $A
rm -f /tmp/air.h5 /tmp/air.out.h5*
tail -25 $A
echo "airplane at ${SECONDS}s"
timeout 60 $B/simengine-bench gpu-hines --sizes 256000 --min-time 0.03 --variants block32-auto \
  --csv $OUT/gpu_hines_auto_s5_final.csv > $OUT/gpu_hines_auto_s5_final.txt 2>&1
grep -E "copy band|auto" $OUT/gpu_hines_auto_s5_final.txt
echo "end at ${SECONDS}s"
