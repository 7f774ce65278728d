# Device run 2 of session 5 for the Hines solve alone (docs/gpu-hines.md, "Session 5"): the same
# kernel as run 1 with the COOP cost model refitted to run 1 (372 + 226 (w - 1) cycles per
# step). The gpu_hines test (its automatic-choice checks follow run 1), the automatic choice
# against the COOP settings it weighs at 256 000 neurons (repeat of run 1's rows), and the
# automatic choice at 25 600 and 2 560 neurons. Run from the repository root on the device
# machine (the `run` tool, carry .devkit); writes into $OUT.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_hines simengine-bench || { echo "build failed"; exit 1; }
B=build-dev/src/simengine-bench
T=$OUT/gpu_hines_test_s5_run2.txt
(cd build-dev && timeout 60 ctest -R gpu_hines -V) > $T 2>&1
echo "ctest rc=$?" >> $T
grep -E "checks|solves|automatic|tests passed|FAIL" $T | tail -24
V=block32-auto,full-auto,block32-stream-t128-r0,block32-coop-l2,block32-coop-l4,block32-coop-l4-c2,block32-coop-l8
R=$OUT/gpu_hines_256000_s5_run2.txt
timeout 80 $B gpu-hines --sizes 256000 --min-time 0.03 --variants $V \
  --csv $OUT/gpu_hines_256000_s5_run2.csv > $R 2>&1
echo "bench rc=$?" >> $R
R2=$OUT/gpu_hines_small_sizes_s5_run2.txt
timeout 40 $B gpu-hines --sizes 25600,2560 --min-time 0.02 \
  --variants block32-auto,block32-stream-t128-c2 > $R2 2>&1
echo "bench rc=$?" >> $R2
for f in $R $R2; do grep -E "copy band|ok|n/a|FAIL|wrong|rc=" $f | cut -c1-60,85-150; done
