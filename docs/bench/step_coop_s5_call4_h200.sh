#!/bin/bash
# (As run. e2e_gpu failed at once: it needs simengine-prep, which this build list lacks.)
# Device call 4 of the coop step, session 5 (helper C3): the knobs SE_COOP_STAGE_SHORT (the
# records of phases 0 and 3b staged through shared memory in batches of G steps by cp.async,
# instead of register rings whose loads share one scoreboard) and SE_COOP_STAGE_EV (the events'
# records, phases 2 and 3a, likewise in batches of 8); both off is call 3's kernel (with the
# ring's shared memory now counted in se_coop_estimate).
# Build, engine_stream (coop against fused2 and the CPU path, the knobs off and on), e2e_gpu's
# coop runs (default knobs), the 256 000-cell step bench: fused2 and coop with both knobs on,
# coop with both off, each alone, then 4 against 8 threads per cell with both on; each stage only
# while time is left. Outputs under $OUT.
set -o pipefail
T0=$SECONDS; left() { echo $((212 - SECONDS + T0)); }
source .devkit/env.sh; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_stream simengine simengine-bench 2>&1 | grep -v tdbem_kernels
echo "built at $((SECONDS - T0)) s"
(cd build-dev && timeout 75 ctest -R engine_stream -V) > $OUT/tests.txt 2>&1
grep -E "GPU coop|checks|Passed|Failed" $OUT/tests.txt | cut -c1-200
echo "tests done at $((SECONDS - T0)) s"
(cd build-dev && SE_E2E_GPU_RUNS="coop coop2r" timeout 45 ctest -R e2e_gpu -V) > $OUT/e2e.txt 2>&1
grep -E "max|Passed|Failed|coop" $OUT/e2e.txt | tail -8 | cut -c1-200
echo "e2e done at $((SECONDS - T0)) s"
B=build-dev/src/simengine-bench; R="--steps 10 --cpu 0 --mixed 0 --huge-swc"
run() { # label, environment (VAR=value ...), the bench's --only, [--classes LIST]
  [ $(left) -gt 20 ] || { echo "$1: no time left"; return; }
  echo "== $1"
  env SE_COOP_VERBOSE=1 $2 timeout $(( $(left) - 3 )) $B step --neurons 256000 $R "" --only $3 $4 2>&1 |
    grep -E "coop|fused2|bandwidth"
}
{ run "SHORT=1 EV=1" "SE_COOP_STAGE_SHORT=1 SE_COOP_STAGE_EV=1" fused2,coop
  run "SHORT=0 EV=0" "SE_COOP_STAGE_SHORT=0 SE_COOP_STAGE_EV=0" coop
  run "SHORT=1 EV=0" "SE_COOP_STAGE_SHORT=1 SE_COOP_STAGE_EV=0" coop
  run "SHORT=0 EV=1" "SE_COOP_STAGE_SHORT=0 SE_COOP_STAGE_EV=1" coop
  run "SHORT=1 EV=1 LANES=4" "SE_COOP_STAGE_SHORT=1 SE_COOP_STAGE_EV=1 SE_COOP_LANES=4" coop \
    "--classes medium-high,big-high"
  run "SHORT=1 EV=1 LANES=8" "SE_COOP_STAGE_SHORT=1 SE_COOP_STAGE_EV=1 SE_COOP_LANES=8" coop \
    "--classes small-low,medium-low,big-low"
} 2>&1 | tee $OUT/bench.txt | grep -v "coop: morphology"
echo "done at $((SECONDS - T0)) s"
