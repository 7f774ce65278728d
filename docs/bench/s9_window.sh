#!/bin/bash
# Device call of session 9: the COOP Hines solve with u, l, d read from a 4 MB window per array
# (docs/bench/s9_window.patch: every group's coefficients at b0 mod 2^19, resident in L2 without
# the hot spot of one shared copy), so that device memory sees mostly rhs in and x out (16 B per
# compartment, the step's floor for passive rows): how fast the COOP structure runs on the step's
# bytes. Solutions are wrong by construction (timing only). A: this tree. From the repository
# root on the device (run tool, carry .devkit): bash docs/bench/s9_window.sh
source .devkit/env.sh
B=/tmp/s9w
tools/device/build_patched.sh docs/bench/s9_window.patch $B 16 simengine-bench ||
  echo "B build failed"
echo "built at ${SECONDS}s"
H=$OUT/s9_window.txt
V=block4-auto,block8-auto,block16-auto
for k in 1 2; do
  echo "== B window" >> $H
  timeout 90 $B/build/src/simengine-bench gpu-hines --sizes 256000 --min-time 0.1 \
    --variants $V >> $H 2>&1
done
grep -E "^==|copy band|256000" $H | cut -c1-12,37-62,75-130
echo "end at ${SECONDS}s"
