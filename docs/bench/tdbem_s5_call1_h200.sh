#!/bin/bash
# Session 5, helper A, device call 1 (docs/tdbem.md Section 16, "Session 5: one window per slice
# and thread-block"): build, the tdbem GPU tests, the benchmark and a repeat of single ng 8, an
# A/B against the committed code (the tree with docs/bench/tdbem_window_s5_call1.patch reversed,
# built beside) and Nsight Compute on cb_pair_kernel ng 8, all by tools/device/tdbem_cb.sh; each
# output line with the seconds since the start. Run from the repository root on the H200:
#   source .devkit/env.sh; bash docs/bench/tdbem_s5_call1_h200.sh   (outputs in $OUT)
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
start=$(date +%s)
AB=docs/bench/tdbem_window_s5_call1.patch PROFILE=1 tools/device/tdbem_cb.sh 2>&1 |
  while IFS= read -r line; do echo "[$(($(date +%s) - start)) s] $line"; done |
  tee $OUT/tdbem_s5_call1_log.txt
