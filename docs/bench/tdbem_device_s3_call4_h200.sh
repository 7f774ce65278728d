#!/bin/bash
# Session 3, device call 4: CB with column starts from the record's counts (no ballot chain), coarse waits, 1 KB groups:
# build, tdbem GPU tests, simengine-bench tdbem, and where the instructions go (ncu source counters
# on CB ng 8 single, SASS of the kernel).
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
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 120 $NCU --clock-control none -k regex:cb_kernel -c 1 --section SpeedOfLight \
  --section WarpStateStats --section InstructionStats --section SourceCounters -o $OUT/cbf8 \
  build-dev/src/simengine-bench tdbem --n 6000 --kmax 150 --min-time 0 --hilbert --ng 8 \
  --no-front --precision single > $OUT/ncu_cbf8.txt 2>&1
$NCU -i $OUT/cbf8.ncu-rep --page source --csv --print-source sass > $OUT/cbf8_source.csv 2>&1
$NCU -i $OUT/cbf8.ncu-rep --page details > $OUT/cbf8_details.txt 2>&1
grep -E "Duration|Executed Instructions  |Warp Cycles Per Issued|Issue Slots|DRAM Through" $OUT/cbf8_details.txt
OBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
$OBJ -sass build-dev/src/simengine-bench 2>/dev/null | awk '/Function : .*cb_kernelIfLi8E/{p=1} p&&/Function : /&&!/cb_kernelIfLi8E/{p=0} p' > $OUT/cbf8.sass
wc -l $OUT/cbf8.sass $OUT/cbf8_source.csv
