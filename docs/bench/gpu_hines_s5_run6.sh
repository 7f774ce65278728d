# Device run 6 of session 5 for the Hines solve alone (docs/gpu-hines.md, "Session 5, run 6"):
# three cuts of the COOP step's dependency chains against the committed kernel, in one machine
# session.
#   CUT_FWD   1  forward: x = fma(-h, x_p, g), row 0's h zeroed when (h, g) is read ahead (x_p
#                of row 0 is the zero cell), so no CF_TOP select on the x chain
#   CUT_CARRY 2  backward: the carried contribution enters as fma(-(u l), r, d - a) and
#                fma(-u, g, rhs - a) (carry (u l, r, u, g), not the products), d - a and
#                rhs - a off the chain
#   CUT_IDLE  4  forward: the idle test on the entry's sign bit (one compare)
# Not run in session 5 (no device budget left); run in session 6 (docs/gpu-hines.md,
# "Session 5, run 6"; cuts 1 and 2 kept). To run it again: apply docs/bench/gpu_hines_s5_run6_switch.patch to cuda/hines_coop.cu
# (commit 20c7c1e; the three cuts behind a temporary switch), and put the committed file next to
# it (`git show HEAD:cuda/hines_coop.cu > cuda/hines_coop_head_b4.txt`, an untracked file to
# delete after the call); one call, timeout 120 s (a fresh machine builds everything first).
# The kernel as run holds all three (7, the default); SE_COOP_CUTS selects others for L 4 with
# 6 stages (the automatic setting of the medium classes). The committed cuda/hines_coop.cu is
# built into a second simengine-bench. Kept afterwards: the setting that measured fastest; all
# three without the switch is docs/bench/gpu_hines_s5_run6_cuts_unmeasured.patch.
# Run from the repository root on the device machine (the `run` tool, carry .devkit); writes
# into $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
echo "build done at ${SECONDS}s"
cp build-dev/src/simengine-bench /tmp/bench_new
T=$OUT/gpu_hines_test_s5_run6.txt
(cd build-dev && timeout 40 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|solves|tests passed|FAIL" $T | tail -6
echo "test done at ${SECONDS}s"
cp cuda/hines_coop.cu /tmp/hines_coop_new.cu
cp cuda/hines_coop_head_b4.txt cuda/hines_coop.cu
cmake --build build-dev -j"$(nproc)" --target simengine-bench > $OUT/build_head.log 2>&1 ||
  { echo "head build failed"; tail -5 $OUT/build_head.log; }
cp build-dev/src/simengine-bench /tmp/bench_head
cp /tmp/hines_coop_new.cu cuda/hines_coop.cu
echo "head build done at ${SECONDS}s"
R=$OUT/gpu_hines_256000_s5_run6.txt
M="--sizes 256000 --min-time 0.1 --classes medium-low,medium-high"
bench() { # label binary args...
  local label=$1 bin=$2; shift 2
  if [ $SECONDS -gt 108 ]; then echo "== $label: skipped (time)" >> $R; return; fi
  echo "== $label" >> $R
  timeout 12 $bin gpu-hines "$@" >> $R 2>&1
  echo "rc=$?" >> $R
}
bench "new (cuts 7), A" /tmp/bench_new $M --variants block32-auto,block32-coop-l4-s6
bench "head, A" /tmp/bench_head $M --variants block32-auto,block32-coop-l4-s6
for c in 0 1 2 4 6 5 3; do
  SE_COOP_CUTS=$c bench "new, SE_COOP_CUTS=$c" /tmp/bench_new $M --variants block32-coop-l4-s6
done
bench "new (cuts 7), B" /tmp/bench_new $M --variants block32-coop-l4-s6
bench "head, B" /tmp/bench_head $M --variants block32-coop-l4-s6
bench "new (cuts 7), small classes" /tmp/bench_new --sizes 256000 --min-time 0.05 \
  --classes small-low,small-high --variants block32-auto
bench "head, small classes" /tmp/bench_head --sizes 256000 --min-time 0.05 \
  --classes small-low,small-high --variants block32-auto
echo "bench done at ${SECONDS}s"
grep -E "^==|ok|n/a|FAIL|wrong|rc=" $R | cut -c1-13,37-62,75-115,130-140
