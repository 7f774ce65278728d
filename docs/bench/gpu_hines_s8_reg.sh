#!/bin/bash
# Device run (session 8) for the Hines solve alone (docs/gpu-hines.md, "Session 8: register
# rows"): 8-lane COOP plans keep (h, g) of the first 24 backward steps in registers and drop the
# cells of the rows among them that no other row reads (-reg), so that big-high and big-low L 8
# hold 4 warps with 6 stages instead of 3 (-noreg). Builds, prints the register use of the
# kernels, runs gpu_hines on the GPU (register rows included), then A B A B rows at 256 000
# neurons and the automatic rows of every class.
# On block 32, 4 warps measured no faster than 3 (docs/gpu-hines.md "Session 8"); the measured
# tree is docs/bench/gpu_hines_s8_reg_first.patch on commit a2ca6ac. The register rows came back
# for block 4 (gpu_hines_s8_reg_block4.sh), where they pay.
# Run from the repository root (the `run` tool, carry .devkit); writes into $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
echo "build done at ${SECONDS}s"
obj=$(find build-dev -name "hines_coop.cu.o" | head -1)
cuobjdump --dump-resource-usage "$obj" 2>/dev/null | grep -A1 "k_coopILi4ELi[456]ELb1ELi" |
  grep -E "Function|REG" | sed 's/Function \(.*\):/\1/' | cut -c1-160 > $OUT/coop_regs.txt
cat $OUT/coop_regs.txt | grep -o "REG:[0-9]*.*STACK:[0-9]*\|LOCAL:[0-9]*" | head -12
T=$OUT/gpu_hines_test_s8_reg.txt
(cd build-dev && timeout 180 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|automatic settings|register rows|tests passed|tests failed|FAIL|rc=" $T | tail -14
echo "test done at ${SECONDS}s"
R=$OUT/gpu_hines_256000_s8_reg.txt
LIMIT=${LIMIT:-500}
bench() { # label args...
  local label=$1; shift
  if [ $SECONDS -gt $LIMIT ]; then echo "== $label: skipped (time)" >> $R; return; fi
  echo "== $label (at ${SECONDS}s)" >> $R
  timeout 90 build-dev/src/simengine-bench gpu-hines --sizes 256000 --min-time 0.1 "$@" >> $R 2>&1
  echo "rc=$?" >> $R
}
BIG_A="--classes big-low,big-high --variants block32-coop-l8-s6-noreg,block32-coop-l4-s6-noreg"
BIG_B="--classes big-low,big-high --variants block32-coop-l8-s6-reg,block32-coop-l8-s5-reg,block32-coop-l8-s4-reg,block32-coop-l8-s6-w3-reg"
MED="--classes medium-low,medium-high --variants block32-coop-l4-s6,block32-coop-l8-s6-noreg,block32-coop-l8-s6-reg"
bench "big, without register rows (A)" $BIG_A
bench "big, register rows (B)" $BIG_B
bench "big, A again" $BIG_A
bench "big, B again" $BIG_B
bench "medium, L 4 and L 8 without and with register rows" $MED
bench "automatic, all classes" --variants block32-auto,full-auto --csv $OUT/gpu_hines_auto_s8_reg.csv
bench "big, 25 600, A and B" --sizes 25600 --classes big-low,big-high --variants block32-coop-l8-s6-noreg,block32-coop-l4-s6-noreg,block32-coop-l8-s6-reg
echo "bench done at ${SECONDS}s"
grep -E "^==|ok|n/a|FAIL|wrong|rc=|error" $R | cut -c1-12,37-140
