#!/bin/bash
# Device run (session 8, last): the explicit and automatic COOP rows on blocks of 8 and 4 against
# block 32, three times in turn, to see which of the final call's medium-high block-8 rows
# (explicit L 4 76.3%, automatic 87.2%) was off. Run from the repository root (carry .devkit).
source .devkit/env.sh
tools/device/build.sh simengine-bench || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
R=$OUT/gpu_hines_s8_repeat.txt
for k in 1 2 3; do
  echo "== round $k (at ${SECONDS}s)" >> $R
  timeout 60 build-dev/src/simengine-bench gpu-hines --sizes 256000 --min-time 0.1 \
    --classes medium-low,medium-high,big-low,big-high \
    --variants block32-coop-l4-s6,block8-coop-l4-s6,block8-auto,block32-auto,block4-coop-l8-s6,block4-auto >> $R 2>&1
done
grep -E "^==|ok|wrong|error" $R | cut -c1-12,37-62,75-115
