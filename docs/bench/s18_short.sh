#!/bin/bash
# Session 18's one device call when less than 5 minutes of device time were left: builds
# simengine-bench only, then gen's step at 256 000 cells on medium-low and big-low: the defaults
# (A), the passive rows' literals scaled by 1 / d' with FMA contraction (B: SE_GEN_SCALED=1
# SE_GEN_FMAD=1), FMA alone (C), scaled alone (D), the fold (E: SE_GEN_HH_FOLD=1), then
# B A E D C B A, as far as the call's time goes (docs/gpu.md "Session 18"). From the repository
# root on the device (run tool, carry .devkit): bash docs/bench/s18_short.sh
source .devkit/env.sh
tools/device/build.sh simengine-bench > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s18_short.txt
source docs/bench/gen_step_one.sh
F=SE_GEN_FMAD=1 C=SE_GEN_SCALED=1 H=SE_GEN_HH_FOLD=1
for v in X=defaults "$C $F" $F $C $H "$C $F" X=defaults $H $C $F "$C $F" X=defaults; do
  one medium-low,big-low $v
  grep -E "^==|cuda gen" $S | tail -3 | sed 's/ (at [0-9]*s)//' | cut -c1-160
done
