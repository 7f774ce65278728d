#!/bin/bash
# The first experiment of the proposal in docs/gpu.md "Session 9" (prepared in session 9, not
# yet run: no device time was left): kernels generated per morphology, one thread per cell, no
# row table (docs/bench/s9_specialized_gen.cpp), at 256 000 cells of each class:
#   solve  the Hines solve alone on 16 B per compartment (two kernels: y in locals, y in shared
#          memory); compare with the window experiment (bench/s9_window.txt: the COOP structure
#          on 16 B, 0.0088-0.0104 ns per compartment)
#   step   the whole time step (fused2's equations, hh, a clamp), against its byte floor; with
#          compiler barriers every 8 rows (no spills) and without (spills)
# Each program checks its results against a host reference (bash
# docs/bench/s9_specialized_hostcheck.sh runs the same bodies on the host). From the repository
# root on the device (run tool, carry .devkit): bash docs/bench/s9_specialized.sh
source .devkit/env.sh
W=/tmp/s9spec
mkdir -p $W
g++ -O2 -o $W/gen docs/bench/s9_specialized_gen.cpp || exit 1
D=docs/bench/s9_spec_morphologies.txt
C="small-low small-high medium-low medium-high big-low big-high"
for c in $C; do
  $W/gen solve $D $c $W/solve-$c.cu 4 64 256000 || exit 1
  $W/gen step $D $c $W/step-$c.cu 4 16 256000 8 || exit 1
  $W/gen step $D $c $W/stepnw-$c.cu 4 16 256000 0 || exit 1
  for p in solve step stepnw; do
    (nvcc -O3 -arch=sm_90 -Isrc -Xptxas -v $W/$p-$c.cu -o $W/$p-$c > $W/$p-$c.ptxas 2>&1 ||
      echo "$p-$c: nvcc failed") &
  done
done
wait
echo "built at ${SECONDS}s"
R=$OUT/s9_specialized.txt
for c in $C; do
  for p in solve step stepnw; do
    echo "== $p $c: $(grep -E 'registers|spill' $W/$p-$c.ptxas | sed 's/ptxas info *: //' | paste -sd';')" >> $R
    timeout 60 $W/$p-$c >> $R 2>&1
  done
done
cat $R
echo "end at ${SECONDS}s"
