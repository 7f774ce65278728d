#!/bin/bash
# First device call of session 12: gen's hh loop unrolled 1, 2 and 4 times (SE_GEN_HH_UNROLL) on
# the six classes at 256 000 cells with coop beside it; the six classes' shapes together (--six
# 256000: gen with several morphologies next to coop and fused2); then every gpu test
# (tools/device/check.sh: gen on one morphology after the several-morphology change, and on
# several morphologies on a GPU for the first time: engine_stream's 8 together, e2e_gpu's
# gen-classes).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s12_first.sh
source .devkit/env.sh
tools/device/build.sh || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s12_hh_unroll.txt
for u in 1 2 4; do
  echo "== SE_GEN_HH_UNROLL=$u (at ${SECONDS}s)" >> $S
  SE_GEN_HH_UNROLL=$u timeout 80 build-dev/src/simengine-bench step --neurons 256000 --steps 10 \
    --cpu 0 --mixed 0 --huge-swc "" --only $([ $u = 1 ] && echo coop,gen || echo gen) >> $S 2>&1
done
echo "== six (at ${SECONDS}s)" >> $S
SE_GEN_VERBOSE=1 timeout 80 build-dev/src/simengine-bench step --classes "" --six 256000 \
  --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only fused2,coop,gen,branch >> $S 2>&1
grep -E "^==|coop|gen|fused2|branch|rror" $S | grep -vE "^(coop|gen|fused2):"
echo "bench at ${SECONDS}s"
tools/device/check.sh || echo "check.sh FAILED: see $OUT/gpu_tests.txt"
echo "end at ${SECONDS}s"
