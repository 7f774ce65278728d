#!/bin/bash
# Prepared in session 11 for the next session's first device call (not run yet): every gpu test
# (tools/device/check.sh: gen on one morphology after the several-morphology change, gen on
# several morphologies on a GPU for the first time: engine_stream's 8 morphologies together,
# e2e_gpu's gen-classes), then gen's hh loop unrolled 1, 2 and 4 times (SE_GEN_HH_UNROLL) on the
# six classes at 256 000 cells, coop beside it.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s12_first.sh
source .devkit/env.sh
tools/device/check.sh || echo "check.sh FAILED: see $OUT/gpu_tests.txt"
echo "tests at ${SECONDS}s"
S=$OUT/s12_hh_unroll.txt
for u in 1 2 4; do
  echo "== SE_GEN_HH_UNROLL=$u" >> $S
  SE_GEN_HH_UNROLL=$u timeout 100 build-dev/src/simengine-bench step --neurons 256000 --steps 10 \
    --cpu 0 --mixed 0 --huge-swc "" --only $([ $u = 1 ] && echo coop,gen || echo gen) >> $S 2>&1
done
grep -E "^==|coop|gen" $S | grep -vE "^(coop|gen):"
echo "end at ${SECONDS}s"
