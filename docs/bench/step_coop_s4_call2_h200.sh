#!/bin/bash
# Device call 2 of the coop step (session 4): build, engine_stream (host models + the fused2 and
# coop kernels vs the CPU), the 256 000-cell step bench (fused2, coop), coop's threads per cell
# and range cap, e2e_gpu's coop runs, a short Nsight Compute profile; each stage only while time
# is left. Outputs under $OUT. (Call 1 ran stale objects: touch what changed first.)
set -o pipefail
T0=$SECONDS; left() { echo $((285 - SECONDS + T0)); }
source .devkit/env.sh; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
touch src/backends.c src/main_run.c src/bench_step.c src/neurons_coop.[ch] cuda/neurons_cuda.c \
  cuda/neurons_coop*.c* cuda/neurons_coop_cuda.h cuda/neurons_branch.c tests/test_stream.c
cmake -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHDF5_ROOT=$HDF5_ROOT >/dev/null &&
  cmake --build build-dev -j16 --target simengine simengine-bench simengine-prep test_stream compare_outputs 2>&1 |
  grep -E "error|warning" | grep -v tdbem_kernels
echo "built at $((SECONDS - T0)) s"
B=build-dev/src/simengine-bench; R="--steps 10 --cpu 0 --mixed 0 --huge-swc"
(cd build-dev && timeout 75 ctest -R engine_stream -V) > $OUT/tests.txt 2>&1
grep -E "GPU|coop model|checks|Passed|Failed" $OUT/tests.txt | cut -c1-150
timeout $(( $(left) - 60 )) $B step --neurons 256000 $R "" --only fused2,coop --csv $OUT/bench.csv 2>&1 | tee $OUT/bench.txt
{ for v in "8 0 medium-high" "2 0 medium-high" "8 0 small-low" "2 0 small-low" "4 100 medium-high" "4 125 medium-high"; do
  set -- $v; [ $(left) -gt 70 ] || break
  echo "SE_COOP_LANES=$1 SE_COOP_CAP=$2"
  SE_COOP_VERBOSE=1 SE_COOP_LANES=$1 SE_COOP_CAP=$2 timeout 25 $B step --neurons 256000 $R "" --classes $3 --only coop 2>&1 | grep coop
done; } 2>&1 | tee $OUT/sweep.txt
[ $(left) -gt 45 ] && (cd build-dev && SE_E2E_GPU_RUNS="coop coop2r" timeout $(( $(left) - 15 )) ctest -R e2e_gpu -V) > $OUT/e2e.txt 2>&1
grep -E "coop|passed|failed" $OUT/e2e.txt | cut -c1-200 | tail -12
[ $(left) -gt 30 ] && timeout $(( $(left) - 5 )) ncu --kernel-name regex:step_coop --launch-skip 2 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section InstructionStats $B step --neurons 25600 --steps 3 --cpu 0 --mixed 0 --huge-swc "" --classes medium-high --only coop > $OUT/ncu.txt 2>&1
grep -E "Duration|Throughput|Achieved Occ|Theoretical Occ|Executed Ipc|Warp Cycles Per Issued|Registers|Block Limit|Stall|Issued Warp" $OUT/ncu.txt | head -24
echo "done at $((SECONDS - T0)) s"
