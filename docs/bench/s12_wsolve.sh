#!/bin/bash
# Prepared in session 12 (not run yet; about 3 minutes): the warp-per-subtree Hines solve of the
# proposal in docs/gpu.md "What is left" (a warp per subtree, a lane per cell; experiment
# generator docs/bench/s9_specialized_gen.cpp, mode wsolve) on the six classes at 256 000 cells,
# K = 4, 8 and 16 warps per block of 32 cells, next to the one-thread-per-cell solve (reg, smem)
# of the same program: ns per compartment, GB/s at 16 B per compartment, % of the copy bandwidth
# measured in the same run, and the relative error against a host solve on three cells.
# ptxas's registers and spills of each kernel are printed with it. Host check of the generated
# code, without a GPU: for each output, python3 docs/bench/s12_wsolve_hostcheck.py OUT.cu.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s12_wsolve.sh
source .devkit/env.sh
W=/tmp/s12w
mkdir -p $W
g++ -O2 -o $W/gen docs/bench/s9_specialized_gen.cpp || exit 1
D=docs/bench/s9_spec_morphologies.txt
C="small-low small-high medium-low medium-high big-low big-high"
for c in $C; do
  for k in 4 8 16; do
    $W/gen wsolve $D $c $W/w-$c-$k.cu 4 $k 256000 || exit 1
    (nvcc -O3 -arch=sm_90 -Isrc -Xptxas -v $W/w-$c-$k.cu -o $W/w-$c-$k > $W/w-$c-$k.ptxas 2>&1 ||
      echo "w-$c-$k: nvcc failed") &
  done
done
wait
echo "built at ${SECONDS}s"
R=$OUT/s12_wsolve.txt
for c in $C; do
  for k in 4 8 16; do
    echo "== $c K=$k: $(grep '^// wsolve' $W/w-$c-$k.cu) | solve_w: $(grep -A2 'solve_w' \
      $W/w-$c-$k.ptxas | grep -E 'registers|spill' | sed 's/ptxas info *: //' | paste -sd';')" >> $R
    timeout 60 $W/w-$c-$k >> $R 2>&1
  done
done
cat $R
echo "end at ${SECONDS}s"
