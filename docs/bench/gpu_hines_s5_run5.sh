# Device run 5 of session 5 for the Hines solve alone (docs/gpu-hines.md, "Session 5, run 5"):
# four cuts of the COOP step against the committed kernel, in one machine session.
#   CUT_ROOTS 1  the roots loops of a backward chunk behind the chunk's CF_ROOTS flag
#   CUT_AHEAD 2  the next chunk's table entries (forward sweep: also its (h, g)) read one chunk
#                ahead (the issue loop unrolled by 2, so that they need no register moves)
#   CUT_SPLIT 4  the backward chunk loop split into the chunks that issue copies and the last ST
#   CUT_STAGE 8  the stage index counted instead of c % ST (a division for 6 stages)
# The kernel as run (docs/bench/gpu_hines_s5_run5_measured.patch on commit 43ca5ff) runs all
# four (15); SE_COOP_CUTS selects others for L 4, 6 stages (the automatic setting of the medium
# classes); the switch was removed after the run (kept: 7). The committed cuda/hines_coop.cu
# (`git show HEAD:cuda/hines_coop.cu > cuda/hines_coop_head_b3.txt` before the call, an
# untracked file deleted after it) is built into a second simengine-bench.
# Run from the repository root on the device machine (the `run` tool, carry .devkit); writes
# into $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
echo "build done at ${SECONDS}s"
cp build-dev/src/simengine-bench /tmp/bench_new
T=$OUT/gpu_hines_test_s5_run5.txt
(cd build-dev && timeout 60 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|solves|tests passed|FAIL" $T | tail -8
echo "test done at ${SECONDS}s"
cp cuda/hines_coop_head_b3.txt cuda/hines_coop.cu
cmake --build build-dev -j"$(nproc)" --target simengine-bench > $OUT/build_head.log 2>&1 ||
  { echo "head build failed"; tail -5 $OUT/build_head.log; }
cp build-dev/src/simengine-bench /tmp/bench_head
echo "head build done at ${SECONDS}s"
R=$OUT/gpu_hines_256000_s5_run5.txt
M="--sizes 256000 --min-time 0.1 --classes medium-low,medium-high"
bench() { # label binary args...
  local label=$1 bin=$2; shift 2
  echo "== $label" >> $R
  timeout 40 $bin gpu-hines "$@" >> $R 2>&1
  echo "rc=$?" >> $R
}
bench "new (cuts 15), A" /tmp/bench_new $M --variants block32-auto,block32-coop-l4-s6,block32-coop-l4-s4
bench "head, A" /tmp/bench_head $M --variants block32-auto,block32-coop-l4-s6,block32-coop-l4-s4
for c in 0 1 2 4 8 7 11 13 14; do
  SE_COOP_CUTS=$c bench "new, SE_COOP_CUTS=$c" /tmp/bench_new $M --variants block32-coop-l4-s6
done
bench "new (cuts 15), B" /tmp/bench_new $M --variants block32-coop-l4-s6
bench "head, B" /tmp/bench_head $M --variants block32-coop-l4-s6
bench "new (cuts 15), small and big classes" /tmp/bench_new --sizes 256000 --min-time 0.05 \
  --classes small-low,small-high,big-high --variants block32-auto,block32-coop-l8-s3
bench "head, small and big classes" /tmp/bench_head --sizes 256000 --min-time 0.05 \
  --classes small-low,small-high,big-high --variants block32-auto,block32-coop-l8-s3
echo "bench done at ${SECONDS}s"
grep -E "^==|copy band|ok|n/a|FAIL|wrong|rc=" $R | grep -v "copy band" | cut -c1-13,37-62,75-115,130-140
if [ $SECONDS -lt 120 ]; then
  N=$OUT/gpu_hines_ncu_s5_run5.txt
  for b in new head; do
    echo "== $b" >> $N
    timeout 25 ncu --clock-control none -k regex:k_coop -c 1 --section SpeedOfLight \
      --section WarpStateStats \
      --metrics smsp__inst_executed.sum,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio \
      /tmp/bench_$b gpu-hines --classes medium-high --sizes 51200 --variants block32-coop-l4-s6 \
      --min-time 0 >> $N 2>&1
  done
  grep -E "^==|Duration|inst_executed|stalled|Warp Cycles Per Issued" $N | head -24
fi
echo "all done at ${SECONDS}s"
