#!/bin/bash
# Session 3, device call 2: the rewritten Contiguous-Blocking kernel (docs/tdbem.md Section 12):
# build, the tdbem GPU tests, simengine-bench tdbem on the recorded case, Nsight Compute on CB ng 8.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHDF5_ROOT=$HDF5_ROOT >/dev/null
cmake --build build-dev -j16 --target simengine-bench test_tdbem_gpu test_tdbem_gpu_run 2>&1 |
  grep -E "error|Built target simengine-bench" | tail -5
(cd build-dev && ctest -R "tdbem_gpu" --output-on-failure -V 2>&1 |
  grep -E "relative|checks|Passed|Failed|skipped|rror|FAIL") > $OUT/tdbem_gpu_tests.txt
cat $OUT/tdbem_gpu_tests.txt | tail -8
export OMP_NUM_THREADS=16
timeout 200 build-dev/src/simengine-bench tdbem --n 6000 --kmax 150 --min-time 0.2 --hilbert \
  --csv $OUT/tdbem_bench.csv > $OUT/tdbem_bench.txt 2>&1
grep -E "cb|copy|cusparse|rror" $OUT/tdbem_bench.txt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for p in single double; do
  timeout 100 $NCU --clock-control none -k regex:cb_kernel -c 1 --section SpeedOfLight \
    --section WarpStateStats --section InstructionStats --section Occupancy \
    --section MemoryWorkloadAnalysis build-dev/src/simengine-bench tdbem --n 6000 --kmax 150 \
    --min-time 0 --hilbert --ng 8 --no-front --precision $p > $OUT/ncu_cb8_$p.txt 2>&1
  grep -E "Duration|DRAM Throughput|Memory Throughput|Issue Slots Busy|Executed Ipc A|Achieved Occupancy|Warp Cycles Per Issued|Stall|Registers|Executed Instructions  " $OUT/ncu_cb8_$p.txt | head -20
done
