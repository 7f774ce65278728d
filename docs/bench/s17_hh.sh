#!/bin/bash
# Session 17, second device call (about 6 minutes): src/hh.h with two exponentials and one
# division per gate (A, this tree) against session 16's hh.h with three exponentials and two
# divisions per gate (B: docs/bench/s17_hh_session16.h in a copy of this tree), gen's defaults on
# the six classes and the six together at 256 000 cells, A B B A; then docs/bench/s17_cost.sh's
# weighted partitions (SE_GEN_WARP_COST) on A. From the repository root on the device (run tool,
# carry .devkit): bash docs/bench/s17_hh.sh
source .devkit/env.sh
rm -rf /tmp/b && mkdir /tmp/b
cp -r CMakeLists.txt cmake cuda data docs include io jobs partition src tests tools /tmp/b/
cp docs/bench/s17_hh_session16.h /tmp/b/src/hh.h
tools/device/build.sh simengine-bench > $OUT/build_a.txt 2>&1 &
pa=$!
(cd /tmp/b && tools/device/build.sh simengine-bench) > $OUT/build_b.txt 2>&1 &
pb=$!
wait $pa || { tail -30 $OUT/build_a.txt; exit 1; }
wait $pb || { tail -30 $OUT/build_b.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s17_hh.txt
six() {
  echo "== $1 (at ${SECONDS}s)" >> $S
  SE_GEN_VERBOSE=1 timeout 100 $2/build-dev/src/simengine-bench step --six 256000 \
    --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
}
six "A: this tree's hh.h" .
six "B: session 16's hh.h" /tmp/b
six "B: session 16's hh.h" /tmp/b
six "A: this tree's hh.h" .
grep -E "^==|copy|hh compartment|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
echo "A/B done at ${SECONDS}s"
S=$OUT/s17_cost.txt
source docs/bench/gen_step_one.sh
one big-low,big-high
one big-low,big-high SE_GEN_WARP_LEVELS=2 SE_GEN_WARP_COST=3
one big-low,big-high SE_GEN_WARP_LEVELS=2 SE_GEN_WARP_COST=2
one medium-low,medium-high SE_GEN_WARP_COST=2
one medium-low,medium-high SE_GEN_WARP_COST=3
one big-low,big-high
grep -E "^==|cuda gen|rror" $S | sed 's/ (at [0-9]*s)//'
echo "end at ${SECONDS}s"
