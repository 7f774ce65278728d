#!/bin/bash
# Device call of session 11: three shared exponentials in src/hh.h (6 exps instead of 9) and the
# generated step kernels' variant 1 (every v and the hh state copied into shared memory at once,
# the hh rows first). A = this tree, B = this tree with docs/bench/s11_hh_session10.patch (hh.h
# as session 10 left it: 9 exps).
# 1. docs/bench/s10_hh_ceiling.cu against A's and B's hh.h ("new" = the hh.h it is built with):
#    ns per hh compartment-step, every value in registers;
# 2. the generated whole-step kernels (docs/bench/s9_specialized_gen.cpp), variants 0 and 1;
# 3. simengine-bench step at 256 000 cells, coop and fused2, A B B A.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s11_hh_gen.sh
source .devkit/env.sh
B=/tmp/s11b W=/tmp/s11w
mkdir -p $W
tools/device/build_patched.sh docs/bench/s11_hh_session10.patch $B 8 simengine-bench ||
  echo "B build failed" &
tools/device/build.sh simengine-bench || { echo "build failed"; exit 1; }
wait
echo "built at ${SECONDS}s"
H=$OUT/s11_hh_ceiling.txt
for s in src $B/src; do
  echo "== hh.h of $s" >> $H
  nvcc -O3 -arch=sm_90 -I$s docs/bench/s10_hh_ceiling.cu -o $W/hc && $W/hc >> $H 2>&1
done
cat $H
g++ -O2 -o $W/gen docs/bench/s9_specialized_gen.cpp || exit 1
D=docs/bench/s9_spec_morphologies.txt
C="small-low small-high medium-low medium-high big-low big-high"
for c in $C; do
  for v in 0 1; do
    $W/gen step $D $c $W/step$v-$c.cu 4 16 256000 8 $v || exit 1
    (nvcc -O3 -arch=sm_90 -Isrc -Icuda -Xptxas -v $W/step$v-$c.cu -o $W/step$v-$c \
      > $W/step$v-$c.ptxas 2>&1 || echo "$c $v: nvcc failed") &
  done
done
wait
R=$OUT/s11_gen_step.txt
for c in $C; do
  for v in 0 1; do
    echo "== variant $v $c: $(grep -E 'registers|spill' $W/step$v-$c.ptxas | tail -2 |
      sed 's/ptxas info *: //' | paste -sd';')" >> $R
    timeout 60 $W/step$v-$c >> $R 2>&1
  done
done
grep -E "^==|per step" $R
echo "gen at ${SECONDS}s"
S=$OUT/s11_step.txt
for b in build-dev/src $B/build/src $B/build/src build-dev/src; do
  echo "== $b" >> $S
  timeout 100 $b/simengine-bench step --neurons 256000 --steps 10 --cpu 0 --mixed 0 \
    --huge-swc "" --only coop,fused2 >> $S 2>&1
done
grep -E "^==|coop|fused2|hh comp" $S | grep -vE "^(coop|fused2):"
echo "end at ${SECONDS}s"
