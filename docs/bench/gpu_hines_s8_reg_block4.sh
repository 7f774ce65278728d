#!/bin/bash
# Device run (session 8): register rows (a fourth warp for 8 lanes) on block 4, where the
# copies of a warp's group are contiguous (docs/gpu-hines.md "Session 8"). A B A B at 256 000.
# Run from the repository root (carry .devkit); measured on the tree of commit 84caf77 with
# docs/bench/gpu_hines_s8_reg_first.patch applied (the form committed next).
source .devkit/env.sh
tools/device/build.sh simengine-bench || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
R=$OUT/gpu_hines_s8_reg_block4.txt
for k in 1 2; do
  for v in block4-coop-l8-s6-noreg block4-coop-l8-s6-reg,block4-coop-l8-s5-reg; do
    echo "== $v (at ${SECONDS}s)" >> $R
    timeout 60 build-dev/src/simengine-bench gpu-hines --sizes 256000 --min-time 0.1 \
      --classes big-low,big-high,medium-high --variants $v >> $R 2>&1
  done
done
grep -E "^==|ok|wrong|error" $R | cut -c1-12,37-62,75-120
