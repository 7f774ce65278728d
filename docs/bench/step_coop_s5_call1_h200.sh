#!/bin/bash
# Device call 1 of the coop step, session 5 (round 3: one branch-free path for every row in phase
# 1b, padded tables and rings of 4 without clamps or end tests, clamps applied once per cell
# after phase 0): build, engine_stream (host models incl. coop's bit for bit against fused2's,
# the fused2 and coop kernels vs the CPU), the 256 000-cell step bench (fused2, coop at the
# default lane rule), coop at 4 threads on medium-high, a short Nsight Compute profile (one coop
# step of 25 600 medium-high cells at 4 threads, as session 4's), e2e_gpu's coop runs; each stage
# only while time is left. Outputs under $OUT.
set -o pipefail
T0=$SECONDS; left() { echo $((285 - SECONDS + T0)); }
source .devkit/env.sh; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_stream simengine simengine-bench simengine-prep compare_outputs 2>&1 | grep -v tdbem_kernels
echo "built at $((SECONDS - T0)) s"
(cd build-dev && timeout 60 ctest -R engine_stream -V) > $OUT/tests.txt 2>&1
grep -E "GPU|coop model|checks|Passed|Failed" $OUT/tests.txt | cut -c1-170
echo "tests done at $((SECONDS - T0)) s"
B=build-dev/src/simengine-bench; R="--steps 10 --cpu 0 --mixed 0 --huge-swc"
timeout $(( $(left) - 60 )) $B step --neurons 256000 $R "" --only fused2,coop --csv $OUT/bench.csv 2>&1 | tee $OUT/bench.txt
echo "bench done at $((SECONDS - T0)) s"
{ for c in medium-high big-low; do
  [ $(left) -gt 50 ] || break
  echo "SE_COOP_LANES=4 $c"
  SE_COOP_VERBOSE=1 SE_COOP_LANES=4 timeout 20 $B step --neurons 256000 $R "" --classes $c --only coop 2>&1 | grep coop
done; } 2>&1 | tee $OUT/sweep.txt
[ $(left) -gt 40 ] && SE_COOP_LANES=4 timeout $(( $(left) - 15 )) ncu --kernel-name regex:step_coop --launch-skip 2 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section InstructionStats --section SchedulerStats $B step --neurons 25600 --steps 3 --cpu 0 --mixed 0 --huge-swc "" --classes medium-high --only coop > $OUT/ncu.txt 2>&1
grep -E "Duration|Throughput|Achieved Occ|Theoretical Occ|Executed Ipc|Warp Cycles Per Issued|Registers|Block Limit|Executed Instructions  |Active Threads|No Eligible" $OUT/ncu.txt | head -24
echo "ncu done at $((SECONDS - T0)) s"
[ $(left) -gt 150 ] && (cd build-dev && SE_E2E_GPU_RUNS="coop coop2r" timeout $(( $(left) - 5 )) ctest -R e2e_gpu -V) > $OUT/e2e.txt 2>&1
grep -E "coop|passed|failed|Passed|Failed" $OUT/e2e.txt 2>/dev/null | cut -c1-200 | tail -12
echo "done at $((SECONDS - T0)) s"
