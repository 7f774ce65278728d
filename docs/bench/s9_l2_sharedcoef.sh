#!/bin/bash
# Device call of session 9 (two experiments, B = this tree with docs/bench/s9_l2_sharedcoef.patch):
# 1. the coop step's v copies with .L2::128B (as the Hines COOP kernel's), A B A B at 256 000;
# 2. the COOP Hines solve with u, l, d shared by every group (read from L2), so that device memory
#    sees only rhs in and x out (16 B per compartment, the step's floor for passive rows): how fast
#    the COOP structure could go on the step's bytes (its solutions are wrong; timing only).
# Also A's full-layout automatic rows (the session's choice fix). From the repository root on the
# device (run tool, carry .devkit): bash docs/bench/s9_l2_sharedcoef.sh
source .devkit/env.sh
B=/tmp/s9b
tools/device/build_patched.sh docs/bench/s9_l2_sharedcoef.patch $B 8 simengine-bench ||
  echo "B build failed" &
tools/device/build.sh simengine-bench || { echo "build failed"; exit 1; }
wait
echo "built at ${SECONDS}s"
R=$OUT/s9_step_l2.txt
for b in build-dev/src $B/build/src $B/build/src build-dev/src; do
  echo "== $b" >> $R
  timeout 40 $b/simengine-bench step --neurons 256000 --steps 10 --cpu 0 --mixed 0 \
    --huge-swc "" --only coop >> $R 2>&1
done
grep -E "^==|coop" $R | grep -vE "^coop:"
echo "step at ${SECONDS}s"
H=$OUT/s9_hines_sharedcoef.txt
echo "== A full-auto" >> $H
timeout 60 build-dev/src/simengine-bench gpu-hines --sizes 256000 --min-time 0.1 \
  --variants full-auto >> $H 2>&1
echo "== B shared u, l, d" >> $H
timeout 90 $B/build/src/simengine-bench gpu-hines --sizes 256000 --min-time 0.1 \
  --variants block4-auto,block8-auto,block16-auto,full-auto >> $H 2>&1
grep -E "^==|copy band|256000" $H | cut -c1-12,37-62,75-130
echo "end at ${SECONDS}s"
