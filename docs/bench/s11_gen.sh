#!/bin/bash
# Device call of session 11: the generated step kernel (gen, cuda/neurons_gen.c) in the engine.
# 1. correctness: engine_stream (gen on each of its eight morphologies alone, against the CPU
#    backend over 100 ms, with the knobs) and e2e_gpu's gen runs (small-low, medium-high, a real
#    SWC, against the CPU path through simengine and the HDF5 output);
# 2. simengine-bench step at 256 000 cells, coop and gen, then gen with FMA contraction
#    (SE_GEN_FMAD=1), with 64 register rows and without compiler barriers.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s11_gen.sh
source .devkit/env.sh
tools/device/build.sh || { echo "build failed"; exit 1; }
echo "built at ${SECONDS}s"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T=$OUT/s11_gen_tests.txt
(cd build-dev && SE_E2E_GPU_RUNS="gen-small-low gen-medium-high gen-swc" \
  ctest -R "engine_stream|e2e_gpu" --output-on-failure -V) > $T 2>&1
grep -E "GPU gen|gen-|gen:|tests passed|tests failed|FAIL" $T | tail -40
echo "tests at ${SECONDS}s"
S=$OUT/s11_gen_step.txt
run() {
  echo "== $*" >> $S
  env "$@" timeout 120 build-dev/src/simengine-bench step --neurons 256000 --steps 10 --cpu 0 \
    --mixed 0 --huge-swc "" --only coop,gen >> $S 2>&1
}
run SE_GEN_VERBOSE=1
run SE_GEN_FMAD=1
run SE_GEN_REG_ROWS=64
run SE_GEN_WINDOW=0
grep -E "^==|coop|gen" $S | grep -vE "^(coop|gen):"
echo "end at ${SECONDS}s"
