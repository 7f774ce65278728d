# Second device run of session 7 (docs/gpu-hines.md, "Session 7: groups handed out from a
# counter"), after docs/bench/gpu_hines_s7_dyn.sh (its switch is gone since the committed form:
# apply docs/bench/gpu_hines_s7_dyn_switch.patch to cuda/hines_coop.cu of commit 162f255 to
# rerun this script): (1) where the gain comes from: the committed
# loop (SE_COOP_DYN=0), the counter (1), and the new loop with the static order k, k + warps, ...
# (2), interleaved; (2) the COOP candidates of the automatic choice (L 2, 4, 8 x 1, 2 CTAs per
# SM, automatic stages) on the six classes with the counter, to refit the cost model, and the
# big classes' stages; (3) the automatic choice at 2 560 and 25 600 neurons without and with the
# counter. Run from the repository root on the device machine (the `run` tool, carry .devkit).
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh simengine-bench || { echo "build failed"; exit 1; }
echo "build done at ${SECONDS}s"
R=$OUT/gpu_hines_s7_dyn2.txt
C=$OUT/gpu_hines_s7_dyn2_candidates.csv
LIMIT=${LIMIT:-300}
bench() { # label dyn args...
  local label=$1 dyn=$2; shift 2
  if [ $SECONDS -gt $LIMIT ]; then echo "== $label: skipped (time)" >> $R; return; fi
  echo "== $label (SE_COOP_DYN=$dyn, at ${SECONDS}s)" >> $R
  SE_COOP_DYN=$dyn timeout 90 build-dev/src/simengine-bench gpu-hines --min-time 0.1 "$@" >> $R 2>&1
  echo "rc=$?" >> $R
}
ATTR="--sizes 256000 --classes small-low,medium-low,medium-high,big-high --variants block32-coop-l2-s5,block32-coop-l4-s6,block32-coop-l8-s3"
bench "attribution 0" 0 $ATTR
bench "attribution 1" 1 $ATTR
bench "attribution 2" 2 $ATTR
bench "attribution 0 again" 0 $ATTR
bench "attribution 2 again" 2 $ATTR
bench "attribution 1 again" 1 $ATTR
bench "candidates" 1 --sizes 256000 --csv $C --variants block32-coop-l2,block32-coop-l4,block32-coop-l8,block32-coop-l2-c2,block32-coop-l4-c2,block32-coop-l8-c2
bench "big stages" 1 --sizes 256000 --classes big-low,big-high --variants block32-coop-l4-s2,block32-coop-l4-s3,block32-coop-l8-s2,block32-coop-l8-s4,block32-coop-l8-s5,block32-coop-l8-s6,block32-stream-t128-c2
bench "smaller sizes, automatic" 0 --sizes 2560,25600 --variants block32-auto,block32-coop
bench "smaller sizes, automatic" 1 --sizes 2560,25600 --variants block32-auto,block32-coop
echo "bench done at ${SECONDS}s"
grep -E "^==|ok|n/a|FAIL|wrong|rc=" $R | cut -c1-13,37-62,75-115,130-140
