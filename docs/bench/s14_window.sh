#!/bin/bash
# Session 14, fifth device call (about 3 minutes): gen's compiler-barrier window (SE_GEN_WINDOW,
# default 8 rows, never tuned for the warp kernels) at 4, 16 and 32 rows with session 14's
# per-morphology defaults, the six classes and the six together at 256 000 cells (times the byte
# floor). From the repository root on the device (run tool, carry .devkit).
source .devkit/env.sh
tools/device/build.sh simengine-bench > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s14_window.txt
for w in 16 4 32; do
  echo "== SE_GEN_WINDOW=$w (at ${SECONDS}s)" >> $S
  SE_GEN_WINDOW=$w SE_GEN_VERBOSE=1 timeout 60 build-dev/src/simengine-bench step --six 256000 \
    --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
done
grep -E "^==|cuda gen|rror" $S | sed 's/(at [0-9]*s)//'
echo "end at ${SECONDS}s"
