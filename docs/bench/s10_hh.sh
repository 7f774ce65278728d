#!/bin/bash
# Device call of session 10: what the hh rows cost in FP64 work, and what 6 divisions instead of
# 18 (src/hh.h since session 10) buy. A = this tree (new form), B = this tree with
# docs/bench/s10_hh_old.patch (hh.mod's rates as written up to session 9).
# 1. docs/bench/s10_hh_ceiling.cu: ns per hh compartment-step with every value in registers,
#    old and new form, next to the FP64 FMA rate and the copy bandwidth: each class's compute
#    floor of the hh rows against its byte floor;
# 2. the generated whole-step kernels of docs/bench/s9_specialized.sh, old and new hh form;
# 3. simengine-bench step at 256 000 cells, coop and fused2, A B B A.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s10_hh.sh
source .devkit/env.sh
B=/tmp/s10b W=/tmp/s10w
mkdir -p $W
tools/device/build_patched.sh docs/bench/s10_hh_old.patch $B 8 simengine-bench ||
  echo "B build failed" &
tools/device/build.sh simengine-bench || { echo "build failed"; exit 1; }
wait
echo "built at ${SECONDS}s"
nvcc -O3 -arch=sm_90 -Isrc docs/bench/s10_hh_ceiling.cu -o $W/hc && $W/hc | tee $OUT/s10_hh_ceiling.txt
g++ -O2 -o $W/gen docs/bench/s9_specialized_gen.cpp || exit 1
D=docs/bench/s9_spec_morphologies.txt
C="small-low small-high medium-low medium-high big-low big-high"
for c in $C; do
  $W/gen step $D $c $W/step-$c.cu 4 16 256000 8 || exit 1
  (nvcc -O3 -arch=sm_90 -Isrc $W/step-$c.cu -o $W/new-$c > /dev/null 2>&1 || echo "$c: nvcc failed") &
  (nvcc -O3 -arch=sm_90 -I$B/src $W/step-$c.cu -o $W/old-$c > /dev/null 2>&1 || echo "$c: nvcc failed") &
done
wait
R=$OUT/s10_gen_step.txt
for c in $C; do
  for p in old new; do
    echo "== $p $c" >> $R
    timeout 60 $W/$p-$c >> $R 2>&1
  done
done
grep -E "^==|per step" $R
echo "gen at ${SECONDS}s"
S=$OUT/s10_step.txt
for b in build-dev/src $B/build/src $B/build/src build-dev/src; do
  echo "== $b" >> $S
  timeout 60 $b/simengine-bench step --neurons 256000 --steps 10 --cpu 0 --mixed 0 \
    --huge-swc "" --only coop,fused2 >> $S 2>&1
done
grep -E "^==|coop|fused2" $S | grep -vE "^(coop|fused2):"
echo "end at ${SECONDS}s"
