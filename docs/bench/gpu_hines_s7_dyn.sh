# Device run (session 7) for the Hines solve alone (docs/gpu-hines.md, "Session 7: groups handed
# out from a counter"): the persistent COOP warps take their groups k, k + warps, ... (the
# committed kernel) or, with the temporary switch SE_COOP_DYN=1 (read at plan creation), from a
# counter in device memory (atomicAdd by lane 0, one group ahead), so that a warp alone on its
# scheduler takes more groups than two warps sharing one. Session 5's run 1 (persistent warps)
# lost 8 points on medium-high L 8 (7 warps per SM: three schedulers with two warps, one with
# one) and 10 on small-high L 4 (11 warps). A/B interleaved in one machine session, one binary:
# the gpu_hines test with the switch, then each variant set without (A) and with (B) it.
# The switch is gone since the committed form (the counter the only path); to rerun, apply
# docs/bench/gpu_hines_s7_dyn_switch.patch to cuda/hines_coop.cu of commit 162f255.
# Run from the repository root on the device machine (the `run` tool, carry .devkit); writes
# into $OUT, a summary on stdout.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
echo "build done at ${SECONDS}s"
T=$OUT/gpu_hines_test_s7_dyn.txt
(cd build-dev && SE_COOP_DYN=1 timeout 60 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest (SE_COOP_DYN=1) rc=$?" >> $T
grep -E "checks|solves|tests passed|FAIL" $T | tail -6
echo "test done at ${SECONDS}s"
R=$OUT/gpu_hines_256000_s7_dyn.txt
LIMIT=${LIMIT:-430}
bench() { # label dyn args...
  local label=$1 dyn=$2; shift 2
  if [ $SECONDS -gt $LIMIT ]; then echo "== $label: skipped (time)" >> $R; return; fi
  echo "== $label (SE_COOP_DYN=$dyn, at ${SECONDS}s)" >> $R
  SE_COOP_DYN=$dyn timeout 60 build-dev/src/simengine-bench gpu-hines --sizes 256000 \
    --min-time 0.1 "$@" >> $R 2>&1
  echo "rc=$?" >> $R
}
MED="--classes medium-low,medium-high --variants block32-coop-l4-s6,block32-coop-l8-s2,block32-coop-l8-s3,block32-coop-l8-s4,block32-coop-l8-s6"
BIG="--classes big-low,big-high --variants block32-coop-l8-s3,block32-coop-l16-s2,block32-coop-l16-s3,block32-coop-l16-s4"
SMALL="--classes small-low,small-high --variants block32-coop-l2-s5,block32-coop-l4,block32-coop-l4-s5"
bench "medium, A" 0 $MED
bench "medium, B" 1 $MED
bench "big, A" 0 $BIG
bench "big, B" 1 $BIG
bench "small, B" 1 $SMALL
bench "small, A" 0 $SMALL
bench "medium, B again" 1 $MED
bench "medium, A again" 0 $MED
bench "automatic, all classes, B" 1 --variants block32-auto
echo "bench done at ${SECONDS}s"
grep -E "^==|ok|n/a|FAIL|wrong|rc=" $R | cut -c1-13,37-62,75-115,130-140
