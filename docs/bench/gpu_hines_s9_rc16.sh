#!/bin/bash
# Device run (session 9, call 1): validates commit c0a0250 on the GPU (gpu_hines, the register
# chunks without the dead read-ahead) and measures 16 register chunks against 12 on block 4
# (A B A B, 256 000 neurons). B is this tree with COOP_REG_CHUNKS = 16 (sed on a copy,
# docs/gpu-hines.md "Session 9"). Run from the repository root (carry .devkit):
#   bash docs/bench/gpu_hines_s9_rc16.sh
source .devkit/env.sh
B=/tmp/rc16
rm -rf $B && mkdir -p $B && cp -r CMakeLists.txt cmake src io partition cuda include tests tools $B/
sed -i 's/constexpr int COOP_REG_CHUNKS = 12;/constexpr int COOP_REG_CHUNKS = 16;/' $B/cuda/hines_coop.cu
grep -c "COOP_REG_CHUNKS = 16" $B/cuda/hines_coop.cu
(cd $B && cmake -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DHDF5_ROOT="$HDF5_ROOT" >/dev/null && cmake --build build -j8 --target simengine-bench \
  > build.log 2>&1 || { grep error build.log | head; echo "B build failed"; }) &
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
wait
echo "built at ${SECONDS}s"
(cd build-dev && timeout 150 ctest -R gpu_hines -V) > $OUT/gpu_hines_test_s9.txt 2>&1
grep -E "checks|register rows|tests passed|tests failed|FAIL" $OUT/gpu_hines_test_s9.txt | tail -6
echo "test at ${SECONDS}s"
R=$OUT/gpu_hines_s9_rc16.txt
V=block4-auto,block4-coop-l8-s5-reg,block4-coop-l8-s4-reg
for k in 1 2; do
  for b in build-dev/src $B/build/src; do
    echo "== $b (at ${SECONDS}s)" >> $R
    timeout 60 $b/simengine-bench gpu-hines --sizes 256000 --min-time 0.1 \
      --classes big-low,big-high,medium-high,medium-low --variants $V >> $R 2>&1
  done
done
grep -E "^==|ok|wrong|error" $R | cut -c1-12,37-62,75-120
echo "end at ${SECONDS}s"
