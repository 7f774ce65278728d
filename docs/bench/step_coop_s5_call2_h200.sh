#!/bin/bash
# Device call 2 of the coop step, session 5 (round 3 as call 1, plus: rings of 8 for phases 0
# and 3b, phase 1b's short path for PLAIN rows where the plan's estimate says it pays): build,
# engine_stream, the 256 000-cell step bench (fused2, coop at the default lane rule), coop at 4
# and at 8 threads per cell on every class, the short path forced off and on for the -low classes,
# Nsight Compute (one coop step of 25 600 medium-high cells at 4 threads, as call 1, plus the
# source counters), e2e_gpu's coop runs; each stage only while time is left. Outputs under $OUT.
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
{ for l in 4 8; do
  [ $(left) -gt 120 ] || break
  echo "SE_COOP_LANES=$l"
  SE_COOP_VERBOSE=1 SE_COOP_LANES=$l timeout 40 $B step --neurons 256000 $R "" --only coop 2>&1 | grep coop
done
for s in 0 1; do for c in medium-low big-low; do
  [ $(left) -gt 100 ] || break
  echo "SE_COOP_SHORT=$s $c"
  SE_COOP_SHORT=$s timeout 20 $B step --neurons 256000 $R "" --classes $c --only coop 2>&1 | grep coop
done; done; } 2>&1 | tee $OUT/sweep.txt
[ $(left) -gt 70 ] && SE_COOP_LANES=4 timeout $(( $(left) - 50 )) ncu --kernel-name regex:step_coop --launch-skip 2 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section InstructionStats --section SchedulerStats --section SourceCounters $B step --neurons 25600 --steps 3 --cpu 0 --mixed 0 --huge-swc "" --classes medium-high --only coop > $OUT/ncu.txt 2>&1
grep -E "Duration|DRAM Throughput|Achieved Occ|Warp Cycles Per Issued|Registers Per|Executed Instructions  |Active Threads|No Eligible" $OUT/ncu.txt | head -12
echo "ncu done at $((SECONDS - T0)) s"
[ $(left) -gt 45 ] && (cd build-dev && SE_E2E_GPU_RUNS="coop coop2r" timeout $(( $(left) - 5 )) ctest -R e2e_gpu -V) > $OUT/e2e.txt 2>&1
grep -E "coop|passed|failed|Passed|Failed" $OUT/e2e.txt 2>/dev/null | cut -c1-200 | tail -8
echo "done at $((SECONDS - T0)) s"
