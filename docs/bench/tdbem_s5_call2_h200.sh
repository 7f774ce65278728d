#!/bin/bash
# Session 5, helper A, device call 2 (docs/tdbem.md Section 16, "Session 5: one window per slice
# and thread-block"): the code of call 1 again (with the review's two fixes already: near_upload
# through se_tdbem_slices_near, one store of the partial sums): build, the tdbem GPU tests, the
# benchmark and a repeat of single ng 8, an A/B against the committed code (the tree with
# docs/bench/tdbem_window_s5_call1.patch reversed) at ng 1, 8, 16 in both precisions, all by
# tools/device/tdbem_cb.sh; each output line with the seconds since the start. At most 8 files
# come back from $OUT: the outputs are bundled into one archive. Run from the repository root on
# the H200:  source .devkit/env.sh; bash docs/bench/tdbem_s5_call2_h200.sh
source .devkit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
start=$(date +%s)
AB=docs/bench/tdbem_window_s5_call1.patch AB_ARGS="--ng 1,8,16 --precision single,double" \
  tools/device/tdbem_cb.sh 2>&1 |
  while IFS= read -r line; do echo "[$(($(date +%s) - start)) s] $line"; done |
  tee /tmp/tdbem_s5_call2_log.txt
cp /tmp/tdbem_s5_call2_log.txt $OUT/
(cd $OUT && tar czf tdbem_s5_call2_out.tgz --remove-files --exclude tdbem_s5_call2_log.txt tdbem_*.txt tdbem_*.csv 2>&1; ls -la)
