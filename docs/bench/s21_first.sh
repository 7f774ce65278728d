#!/bin/bash
# Prepared in session 20 for the next session's first device call, on an H200 if one comes
# (sessions 19 and 20 had only H100s): builds everything; gen on the six classes and the six
# together at 256 000 cells with today's defaults (session 20: the literal table in shared memory
# above 512 rows), then with session 19's (SE_GEN_LITERALS=0) and session 17's (also the scaled
# rows, FMA and the fold off, row weight 5) on the same card; then e2e_gpu with today's defaults.
# About 8 minutes. From the repository root on the device (run tool, carry .devkit):
# bash docs/bench/s21_first.sh
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
source docs/bench/gen_step_one.sh
six > $OUT/s21_defaults.txt 2>&1
six SE_GEN_LITERALS=0 > $OUT/s21_defaults_s19.txt 2>&1
six SE_GEN_LITERALS=0 SE_GEN_SCALED=0 SE_GEN_FMAD=0 SE_GEN_HH_FOLD=0 SE_GEN_WARP_COST=5 \
  > $OUT/s21_defaults_s17.txt 2>&1
for f in s21_defaults s21_defaults_s19 s21_defaults_s17; do
  echo "== $f"; grep -E "copy|cuda gen|rror" $OUT/$f.txt
done
echo "six done at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd build-dev && timeout $((590 - SECONDS)) ctest -R e2e_gpu -V) > $OUT/e2e_gpu.txt 2>&1
echo "e2e_gpu rc $? at ${SECONDS}s"
grep -E "gen|Passed|Failed|FAIL" $OUT/e2e_gpu.txt | tail -20
echo "end at ${SECONDS}s"
