# Device run 7 (session 6) for the Hines solve alone (docs/gpu-hines.md, "Session 6, run 7"):
# five cuts of the COOP chunk (L 4, 6 stages: the automatic setting of the medium classes)
# against the committed kernel, in one machine session, one binary.
#   RUN7_STAGE     1  backward: one c % ST per chunk for the stage loads and the copy issue
#   RUN7_OFF_EARLY 2  backward: the copy offsets of chunk c + ST loaded before the chunk's waits
#                     (they were loaded after the second __syncwarp, and the copy issue waited
#                     on that shared load)
#   RUN7_FWD_OFF   4  forward: the x-store offsets read one chunk ahead (with op and (h, g))
#   RUN7_TOP_ONCE  8  forward: the CF_TOP zeroing of h only on the first forward chunk's (h, g),
#                     the only chunk that holds row 0 (coop_build checks it)
#   RUN7_VOTE     16  backward: the roots branch on __any_sync (uniform: no BSSY/BSYNC)
# cuda/hines_coop.cu holds the cuts behind the temporary switch SE_COOP_RUN7 (environment, read
# at plan creation and in the emulation; docs/bench/gpu_hines_s6_run7_switch.patch). Kernels
# instantiated for L 4, 6 stages, 16-byte copies: 0 (the committed kernel's SASS, checked with
# nvdisasm), 2, 8, 16, 15, 23, 27, 29, 30, 31; every other kernel, and those settings without
# the variable, run 31 (all five). Run from the repository root on the device machine (the `run`
# tool, carry .devkit, timeout 170 s; benches start until 135 s); writes into $OUT, a summary on
# stdout.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
echo "build done at ${SECONDS}s"
T=$OUT/gpu_hines_test_s6_run7.txt
(cd build-dev && timeout 40 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|solves|tests passed|FAIL" $T | tail -6
echo "test done at ${SECONDS}s"
R=$OUT/gpu_hines_256000_s6_run7.txt
M="--sizes 256000 --min-time 0.1 --classes medium-low,medium-high"
bench() { # label run7 args...
  local label=$1 run7=$2; shift 2
  if [ $SECONDS -gt 135 ]; then echo "== $label: skipped (time)" >> $R; return; fi
  echo "== $label" >> $R
  if [ -n "$run7" ]; then
    SE_COOP_RUN7=$run7 timeout 12 build-dev/src/simengine-bench gpu-hines "$@" >> $R 2>&1
  else
    timeout 12 build-dev/src/simengine-bench gpu-hines "$@" >> $R 2>&1
  fi
  echo "rc=$?" >> $R
}
V="--variants block32-coop-l4-s6"
bench "SE_COOP_RUN7=0 (committed kernel), A" 0 $M $V
bench "SE_COOP_RUN7=31 (all five), A" 31 $M $V
bench "SE_COOP_RUN7=15 (all but the vote)" 15 $M $V
bench "SE_COOP_RUN7=0, B" 0 $M $V
bench "SE_COOP_RUN7=30 (all but the stage index)" 30 $M $V
bench "SE_COOP_RUN7=29 (all but the early copy offsets)" 29 $M $V
bench "SE_COOP_RUN7=27 (all but the forward offsets)" 27 $M $V
bench "SE_COOP_RUN7=23 (all but the top test once)" 23 $M $V
bench "SE_COOP_RUN7=0, C" 0 $M $V
bench "sweep, all five (31)" "" --sizes 256000 --min-time 0.1 --classes medium-high \
  --variants block32-coop-l4-s5,block32-coop-l4-s8,block32-coop-l8
bench "SE_COOP_RUN7=2 (early copy offsets alone)" 2 $M $V
bench "SE_COOP_RUN7=8 (top test once alone)" 8 $M $V
bench "SE_COOP_RUN7=16 (vote alone)" 16 $M $V
bench "SE_COOP_RUN7=31, B" 31 $M $V
bench "SE_COOP_RUN7=0, D" 0 $M $V
bench "small classes, automatic (31)" "" --sizes 256000 --min-time 0.05 \
  --classes small-low,small-high --variants block32-auto
echo "bench done at ${SECONDS}s"
grep -E "^==|ok|n/a|FAIL|wrong|rc=" $R | cut -c1-13,37-62,75-115,130-140
