#!/bin/bash
# Device call 3 of the coop step, session 5 (helper C2): the knobs SE_COOP_STAGE (phase 1b's
# records staged through shared memory by cp.async instead of a register ring whose loads share
# one scoreboard), SE_COOP_VWIDE (v copied 16 bytes at a time by the warp, past the L1),
# SE_COOP_STATE_L2 (hh state loaded past the L1); all off is call 2's kernel. (The build of this
# call also had a knob SE_COOP_CARVEOUT, not run here and removed after.)
# Build, engine_stream (coop against fused2 and the CPU path, the knobs off and on), the
# 256 000-cell step bench: fused2 and coop with the knobs off, then coop with knobs on; each
# stage only while time is left. Outputs under $OUT.
set -o pipefail
T0=$SECONDS; left() { echo $((225 - SECONDS + T0)); }
source .devkit/env.sh; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_stream simengine-bench 2>&1 | grep -v tdbem_kernels
echo "built at $((SECONDS - T0)) s"
(cd build-dev && timeout 75 ctest -R engine_stream -V) > $OUT/tests.txt 2>&1
grep -E "GPU coop|checks|Passed|Failed" $OUT/tests.txt | cut -c1-190
echo "tests done at $((SECONDS - T0)) s"
B=build-dev/src/simengine-bench; R="--steps 10 --cpu 0 --mixed 0 --huge-swc"
run() { # label, environment (VAR=value ...), the bench's --only
  [ $(left) -gt 25 ] || { echo "$1: no time left"; return; }
  echo "== $1"
  env SE_COOP_VERBOSE=1 $2 timeout $(( $(left) - 5 )) $B step --neurons 256000 $R "" --only $3 2>&1 |
    grep -E "coop|fused2|bandwidth"
}
{ run "knobs off" "" fused2,coop
  run "STAGE=1" "SE_COOP_STAGE=1" coop
  run "STAGE=1 VWIDE=1 STATE_L2=1" "SE_COOP_STAGE=1 SE_COOP_VWIDE=1 SE_COOP_STATE_L2=1" coop
  run "VWIDE=1 STATE_L2=1" "SE_COOP_VWIDE=1 SE_COOP_STATE_L2=1" coop
} 2>&1 | tee $OUT/bench.txt | grep -v "coop: morphology"
echo "done at $((SECONDS - T0)) s"
