#!/bin/bash
# session 3, device call 1: every GPU test but e2e_gpu, then the HH step at 256 000 neurons
source .devkit/env.sh
set -x
tools/device/check.sh -E e2e_gpu > $OUT/check.txt 2>&1; echo "check rc=$?" >> $OUT/check.txt
tail -5 $OUT/check.txt
cp build-dev/Testing/Temporary/LastTest.log $OUT/LastTest.log 2>/dev/null
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt
timeout 300 build-dev/src/simengine-bench step --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --csv $OUT/step256k.csv 2>&1 | tee $OUT/step256k.txt
