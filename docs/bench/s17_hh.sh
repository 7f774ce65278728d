#!/bin/bash
# Session 17, second device call (about 6 minutes): src/hh.h with two exponentials and one
# division per gate (A, this tree) against session 16's hh.h with three exponentials and two
# divisions per gate (B: this tree with docs/bench/s17_hh_session16.patch, built by
# tools/device/build_patched.sh), gen's defaults on the six classes and the six together at
# 256 000 cells, A B B A; then docs/bench/s17_cost.sh's weighted partitions (SE_GEN_WARP_COST) on
# A. From the repository root on the device (run tool, carry .devkit): bash docs/bench/s17_hh.sh
# (As run in session 17, B was a copy of the tree with session 16's hh.h copied over src/hh.h,
# which is what the patch gives.)
source .devkit/env.sh
tools/device/build.sh simengine-bench > $OUT/build_a.txt 2>&1 &
pa=$!
tools/device/build_patched.sh docs/bench/s17_hh_session16.patch /tmp/b 8 simengine-bench \
  > $OUT/build_b.txt 2>&1 &
pb=$!
wait $pa || { tail -30 $OUT/build_a.txt; exit 1; }
wait $pb || { tail -30 $OUT/build_b.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s17_hh.txt
six() {
  echo "== $1 (at ${SECONDS}s)" >> $S
  SE_GEN_VERBOSE=1 timeout 100 $2 step --six 256000 --neurons 256000 --steps 10 --cpu 0 \
    --mixed 0 --huge-swc "" --only gen >> $S 2>&1
}
A=build-dev/src/simengine-bench B=/tmp/b/build/src/simengine-bench
six "A: this tree's hh.h" $A
six "B: session 16's hh.h" $B
six "B: session 16's hh.h" $B
six "A: this tree's hh.h" $A
grep -E "^==|copy|hh compartment|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
echo "A/B done at ${SECONDS}s"
SE_BENCH_BUILT=1 bash docs/bench/s17_cost.sh
