#!/bin/bash
# Device call of session 11: the gen kernel's register rows (SE_GEN_REG_ROWS: the rows eliminated
# last whose y stays in registers; the others in shared memory) at 256 000 cells of each class,
# 16 to all, with coop as the reference of the same run.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s11_gen_rows.sh
source .devkit/env.sh
tools/device/build.sh simengine-bench || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
S=$OUT/s11_gen_rows.txt
run() {
  echo "== $1 $2" >> $S
  env SE_GEN_REG_ROWS=$1 SE_GEN_VERBOSE=1 timeout 120 build-dev/src/simengine-bench step \
    --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only $2 >> $S 2>&1
}
run 64 coop,gen
for r in 16 128 256 1024; do run $r gen; done
grep -E "^==|coop|gen" $S | grep -vE "^(coop|gen):"
echo "end at ${SECONDS}s"
