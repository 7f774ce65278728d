#!/bin/bash
# Device run (session 8) for the Hines solve alone (docs/gpu-hines.md, "Session 8: a compact
# step table"): the COOP step table in 8 B per entry (12-bit cell indices decoded in the kernel,
# -tc) instead of 20 (-tw) leaves the shared memory to one more warp: big-high L 8 4 warps with
# 5 stages (wide: 3 with 6), big-low L 8 4 warps with 4 stages (wide: 3). Same warps (medium L 4,
# big L 4) measure what the decoding costs. Builds, runs gpu_hines on the GPU (every variant with
# both tables), then A B A B rows at 256 000 neurons and the automatic rows of every class.
# Rejected (the decoding costs more than the warp gains; docs/gpu-hines.md "Session 8"): the
# -tw/-tc variants exist only with docs/bench/gpu_hines_s8_compact_rejected.patch applied to
# commit 93d8774.
# Run from the repository root (the `run` tool, carry .devkit); writes into $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
echo "build done at ${SECONDS}s"
T=$OUT/gpu_hines_test_s8_compact.txt
(cd build-dev && timeout 150 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|automatic settings|tests passed|tests failed|FAIL|rc=" $T | tail -12
echo "test done at ${SECONDS}s"
R=$OUT/gpu_hines_256000_s8_compact.txt
LIMIT=${LIMIT:-500}
bench() { # label args...
  local label=$1; shift
  if [ $SECONDS -gt $LIMIT ]; then echo "== $label: skipped (time)" >> $R; return; fi
  echo "== $label (at ${SECONDS}s)" >> $R
  timeout 90 build-dev/src/simengine-bench gpu-hines --sizes 256000 --min-time 0.1 "$@" >> $R 2>&1
  echo "rc=$?" >> $R
}
BIG_A="--classes big-low,big-high --variants block32-coop-l8-s6-tw,block32-coop-l8-s5-tw,block32-coop-l4-s6-tw"
BIG_B="--classes big-low,big-high --variants block32-coop-l8-s6-tc,block32-coop-l8-s5-tc,block32-coop-l8-s4-tc,block32-coop-l4-s6-tc"
MED_A="--classes medium-low,medium-high --variants block32-coop-l4-s6-tw,block32-coop-l8-s6-tw"
MED_B="--classes medium-low,medium-high --variants block32-coop-l4-s6-tc,block32-coop-l8-s6-tc"
bench "big, wide table (A)" $BIG_A
bench "big, compact table (B)" $BIG_B
bench "medium, wide (A)" $MED_A
bench "medium, compact (B)" $MED_B
bench "big, A again" $BIG_A
bench "big, B again" $BIG_B
bench "medium, B again" $MED_B
bench "medium, A again" $MED_A
bench "automatic, all classes" --variants block32-auto,full-auto --csv $OUT/gpu_hines_auto_s8_compact.csv
bench "big, full layout, A and B" --classes big-low,big-high --variants full-coop-l8-s6-tw,full-coop-l8-s5-tc,full-coop-l8-s4-tc
echo "bench done at ${SECONDS}s"
grep -E "^==|ok|n/a|FAIL|wrong|rc=|error" $R | cut -c1-12,37-140
