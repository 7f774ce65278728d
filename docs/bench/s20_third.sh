#!/bin/bash
# Session 20's third device call (about 3 minutes, on the last 6 minutes of device time): builds
# simengine-bench; gen on the six classes and the six together at 256 000 cells with today's
# defaults (the literal table in shared memory above 512 rows), then with session 19's
# (SE_GEN_LITERALS=0), on the same card. From the repository root on the device (run tool, carry
# .devkit): bash docs/bench/s20_third.sh
source .devkit/env.sh
tools/device/build.sh simengine-bench > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
source docs/bench/gen_step_one.sh
six > $OUT/s20_today.txt 2>&1
six SE_GEN_LITERALS=0 > $OUT/s20_today_s19.txt 2>&1
for f in s20_today s20_today_s19; do
  echo "== $f"; grep -E "copy|cuda gen|rror" $OUT/$f.txt
done
echo "end at ${SECONDS}s"
