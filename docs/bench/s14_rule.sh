#!/bin/bash
# Session 14, second device call: gen's per-morphology rule (cuda/neurons_gen.c warps_rule: 4
# warps with the hh rows in the block up to 128 rows, a thread per cell for long sections up to
# 512 rows, 4 warps up to 512, else 8; cut 1 and registers for 2 blocks per multiprocessor) on
# the six classes and the six together at 256 000 cells, then the alternatives per class (times
# the byte floor). From the repository root on the device (run tool, carry .devkit).
source .devkit/env.sh
tools/device/build.sh > $OUT/build.txt 2>&1 || { tail -30 $OUT/build.txt; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s14_rule.txt
bench() { # classes, then the environment
  local classes=$1; shift
  echo "== $* (at ${SECONDS}s)" >> $S
  env "$@" SE_GEN_VERBOSE=1 timeout 90 build-dev/src/simengine-bench step --classes $classes \
    --six 256000 --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
}
SM=small-low,small-high
bench small-low,small-high,medium-low,medium-high,big-low,big-high DEFAULTS=1
bench $SM,medium-high SE_GEN_WARPS=4 SE_GEN_WARP_HH=0
bench $SM,medium-high SE_GEN_WARPS=4 SE_GEN_WARP_HH=1 SE_GEN_WARP_MIN_BLOCKS=0
bench $SM,medium-high,big-low,big-high SE_GEN_WARPS=8 SE_GEN_WARP_HH=1
bench $SM,medium-high,big-low,big-high SE_GEN_WARPS=6 SE_GEN_WARP_HH=1
bench medium-high,big-low,big-high SE_GEN_WARPS=6 SE_GEN_WARP_HH=0
bench big-low,big-high SE_GEN_WARPS=4 SE_GEN_WARP_HH=0
bench medium-low SE_GEN_WARPS=2 SE_GEN_WARP_HH=0
bench medium-low SE_GEN_WARPS=4 SE_GEN_WARP_HH=0
bench medium-low SE_GEN_WARPS=2 SE_GEN_WARP_HH=1
grep -E "^==|cuda gen|rror" $S | sed 's/(at [0-9]*s)//'
echo "end at ${SECONDS}s"
