# Device run of session 7 (docs/gpu-tridiag.md, "Session 7: groups from a counter"): the
# persistent PART kernels (pipe 2: staged; pipe 3: two halves) take their groups from a counter
# (temporary switch SE_TRIDIAG_DYN=1, read at se_tridiag_create) instead of b, b + gridDim.x, ...
# (0), as the COOP Hines kernel does since session 7 (docs/gpu-hines.md "Session 7"). The
# gpu_tridiag test with the switch, then the automatic configuration against cuSPARSE at 256 and
# 512 rows, A B A B. Run from the repository root on the device machine (the `run` tool, carry
# .devkit). The switch is not in the tree: apply docs/bench/tridiag_s7_dyn_switch.patch to
# cuda/tridiag_batch.cu of commit c30bf24 first.
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tools/device/build.sh test_gpu_tridiag simengine-bench || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
T=$OUT/gpu_tridiag_test_s7_dyn.txt
(cd build-dev && SE_TRIDIAG_DYN=1 timeout 100 ctest -R gpu_tridiag -V) > $T 2>&1
echo "ctest (SE_TRIDIAG_DYN=1) rc=$?" >> $T
grep -E "checks|tests passed|FAIL" $T | tail -4
echo "test at ${SECONDS}s"
R=$OUT/tridiag_s7_dyn.txt
for dyn in 0 1 0 1; do
  if [ $SECONDS -gt 230 ]; then echo "== SE_TRIDIAG_DYN=$dyn: skipped (time)" >> $R; continue; fi
  echo "== SE_TRIDIAG_DYN=$dyn (at ${SECONDS}s)" >> $R
  SE_TRIDIAG_DYN=$dyn timeout 40 build-dev/src/simengine-bench tridiag --rows 256,512 \
    --systems 25600,256000 --neurons 0 --no-vbatch --min-time 0.1 >> $R 2>&1
  echo "rc=$?" >> $R
done
echo "bench at ${SECONDS}s"
grep -E "^==|part|auto|rc=" $R | cut -c1-150 | head -60
