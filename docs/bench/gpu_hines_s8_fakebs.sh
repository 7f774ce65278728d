#!/bin/bash
# Device run (session 8), a timing-only experiment (docs/gpu-hines.md "Session 8"): would a
# Block-Interleaved layout whose block is one warp's systems (BS = G: 4 for L 8, 8 for L 4) lift
# the 8-lane COOP rows above 62% of copy? With SE_COOP_FAKE_BS=B the COOP kernel indexes a
# block-32 batch as if its blocks held B systems: the results are wrong (the bench flags them),
# the addresses and times are those of a block-B batch (the kernel has no data-dependent branch).
# The switch existed only in the measured tree (patch docs/bench/gpu_hines_s8_fakebs.patch). The
# A rows ("block 32") are void: SE_COOP_FAKE_BS= (empty) made getenv non-NULL and BS 0; the
# block-32 times of the same session's earlier calls are the reference.
# Run from the repository root (the `run` tool, carry .devkit); writes into $OUT.
source .devkit/env.sh
tools/device/build.sh simengine-bench || { echo "build failed"; exit 1; }
echo "build done at ${SECONDS}s"
B=build-dev/src/simengine-bench
R=$OUT/gpu_hines_256000_s8_fakebs.txt
bench() { # label fake args...
  local label=$1 fake=$2; shift 2
  echo "== $label (SE_COOP_FAKE_BS=$fake, at ${SECONDS}s)" >> $R
  SE_COOP_FAKE_BS=$fake timeout 90 $B gpu-hines --sizes 256000 --min-time 0.1 "$@" >> $R 2>&1
  echo "rc=$?" >> $R
}
V="--classes big-low,big-high,medium-high --variants block32-coop-l8-s6,block32-coop-l4-s6"
for k in 1 2; do
  bench "block 32 (A)" "" $V
  bench "as block 4 (B)" 4 --classes big-low,big-high,medium-high --variants block32-coop-l8-s6
  bench "as block 8 (C)" 8 $V
done
echo "bench done at ${SECONDS}s"
grep -E "^==|coop|rc=|error" $R | cut -c1-12,37-118
