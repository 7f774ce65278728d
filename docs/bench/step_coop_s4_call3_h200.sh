#!/bin/bash
# Device call 3 of the coop step (session 4, second round: plan records loaded steps ahead,
# byte offsets, padding slots reused): build, the 256 000-cell step bench (fused2, coop),
# engine_stream (host models incl. coop's bit for bit against fused2's, the fused2 and coop
# kernels vs the CPU), coop at 8 threads per cell on the medium/big classes, a short Nsight Compute profile
# (medium-high, as call 2's), e2e_gpu's coop runs; each stage only while time is left. Outputs
# under $OUT.
set -o pipefail
T0=$SECONDS; left() { echo $((188 - SECONDS + T0)); }
source .devkit/env.sh; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
find CMakeLists.txt src io partition cuda include tests -type f -exec touch {} +
cmake -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHDF5_ROOT=$HDF5_ROOT >/dev/null &&
  cmake --build build-dev -j16 --target simengine simengine-bench simengine-prep test_stream compare_outputs 2>&1 |
  grep -E "error|warning" | grep -v tdbem_kernels
echo "built at $((SECONDS - T0)) s"
B=build-dev/src/simengine-bench; R="--steps 10 --cpu 0 --mixed 0 --huge-swc"
timeout $(( $(left) - 60 )) $B step --neurons 256000 $R "" --only fused2,coop --csv $OUT/bench.csv 2>&1 | tee $OUT/bench.txt
echo "bench done at $((SECONDS - T0)) s"
(cd build-dev && timeout 45 ctest -R engine_stream -V) > $OUT/tests.txt 2>&1
grep -E "GPU|coop model|checks|Passed|Failed" $OUT/tests.txt | cut -c1-160
echo "tests done at $((SECONDS - T0)) s"
[ $(left) -gt 40 ] && timeout $(( $(left) - 12 )) ncu --kernel-name regex:step_coop --launch-skip 2 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section InstructionStats $B step --neurons 25600 --steps 3 --cpu 0 --mixed 0 --huge-swc "" --classes medium-high --only coop > $OUT/ncu.txt 2>&1
grep -E "Duration|Throughput|Achieved Occ|Theoretical Occ|Executed Ipc|Warp Cycles Per Issued|Registers|Block Limit|Executed Instructions  " $OUT/ncu.txt | head -20
{ for c in medium-high big-high; do
  [ $(left) -gt 30 ] || break
  echo "SE_COOP_LANES=8 $c"
  SE_COOP_VERBOSE=1 SE_COOP_LANES=8 timeout 20 $B step --neurons 256000 $R "" --classes $c --only coop 2>&1 | grep coop
done; } 2>&1 | tee $OUT/sweep.txt
[ $(left) -gt 35 ] && (cd build-dev && SE_E2E_GPU_RUNS="coop coop2r" timeout $(( $(left) - 5 )) ctest -R e2e_gpu -V) > $OUT/e2e.txt 2>&1
grep -E "coop|passed|failed|Passed|Failed" $OUT/e2e.txt | cut -c1-200 | tail -12
echo "done at $((SECONDS - T0)) s"
