# Third device run of session 7 (docs/gpu-hines.md, "Session 7: groups handed out from a
# counter"): the committed form (the counter the only path, reset by the warp that draws the
# last ticket; the automatic stages 6 or 5 wherever they keep the warps of 4): the gpu_hines
# test, the COOP candidates of the automatic choice at 256 000 neurons for the refit of the cost
# model (CSV), and the automatic rows at 2 560, 25 600 and 256 000 neurons with the old model's
# constants. Run from the repository root on the device machine (the `run` tool, carry .devkit).
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
echo "build done at ${SECONDS}s"
T=$OUT/gpu_hines_test_s7_final_kernel.txt
(cd build-dev && timeout 90 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|solves|tests passed|FAIL|automatic" $T | tail -16
echo "test done at ${SECONDS}s"
R=$OUT/gpu_hines_s7_final_kernel.txt
bench() { # label args...
  local label=$1; shift
  echo "== $label (at ${SECONDS}s)" >> $R
  timeout 120 build-dev/src/simengine-bench gpu-hines --min-time 0.1 "$@" >> $R 2>&1
  echo "rc=$?" >> $R
}
bench "candidates" --sizes 256000 --csv $OUT/gpu_hines_s7_candidates.csv --variants block32-coop-l2,block32-coop-l4,block32-coop-l8,block32-coop-l2-c2,block32-coop-l4-c2,block32-coop-l8-c2,block32-stream-t128,block32-stream-t128-c2,block32-stream-t128-c4-r0
bench "automatic, all sizes" --sizes 2560,25600,256000 --variants block32-auto,full-auto
echo "bench done at ${SECONDS}s"
grep -E "^==|ok|n/a|FAIL|wrong|rc=" $R | cut -c1-13,37-62,75-115,130-140
