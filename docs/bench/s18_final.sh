#!/bin/bash
# Prepared in session 18 for the call after a change of gen's defaults (about 9 minutes): builds
# everything, e2e_gpu alone (every GPU run of simengine against the CPU path through the HDF5
# output) and the GPU-vs-CPU row (25 600 medium-high cells, 16 OpenMP threads) through
# s14_third.sh, then gen's defaults on the six classes and the six together at 256 000 cells.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s18_final.sh
TAG=s18 bash docs/bench/s14_third.sh || exit 1
SE_GEN_VERBOSE=1 timeout $((590 - SECONDS)) build-dev/src/simengine-bench step --six 256000 \
  --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen > $OUT/s18_defaults.txt 2>&1
grep -E "copy|hh compartment|cuda gen|rror" $OUT/s18_defaults.txt
echo "end at ${SECONDS}s"
