#!/bin/bash
# The first experiment of the proposal in docs/gpu.md "Session 9" (prepared in session 9, not
# yet run: no device time left): the Hines solve with the tree compiled into the code, one
# thread per cell, 16 B per compartment (docs/bench/s9_specialized_gen.cpp), for the six
# classes at 256 000 cells. Compare with the window experiment (bench/s9_window.txt: the COOP
# structure on 16 B, 0.0088-0.0104 ns per compartment) and with the step's 1.5x budget
# (0.0057-0.0108 ns). From the repository root on the device (run tool, carry .devkit):
#   bash docs/bench/s9_specialized.sh
source .devkit/env.sh
W=/tmp/s9spec
mkdir -p $W
g++ -O2 -o $W/gen docs/bench/s9_specialized_gen.cpp || exit 1
C="small-low small-high medium-low medium-high big-low big-high"
for c in $C; do
  $W/gen docs/bench/s9_spec_parents.txt $c $W/$c.cu || exit 1
  (nvcc -O3 -arch=sm_90 -Xptxas -v $W/$c.cu -o $W/$c > $W/$c.ptxas 2>&1 || echo "$c: nvcc failed") &
done
wait
echo "built at ${SECONDS}s"
R=$OUT/s9_specialized.txt
for c in $C; do
  echo "== $c ($(grep -E 'registers' $W/$c.ptxas | sed 's/ptxas info *: //' | paste -sd';'))" >> $R
  grep -E "spill" $W/$c.ptxas | paste -sd';' >> $R
  timeout 60 $W/$c >> $R 2>&1
done
cat $R
echo "end at ${SECONDS}s"
