#!/usr/bin/env bash
# simengine-bench gen-source writes gen's kernel source per class (medium-high: a 4-warp kernel),
# refuses a directory it cannot write to, naming the file; tools/gen_phases.py counts a
# hand-written SASS listing's instructions per warp and barrier phase exactly, refuses a listing
# without the step kernel, and, where nvcc and nvdisasm are installed, reads the real SASS of the
# generated source (4 warps, 3 phases). Skips (exit 77) without CUDA in the build.
set -euo pipefail
bin="$SE_BUILD_DIR/src"; src="$SE_SOURCE_DIR"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
if ! "$bin/simengine-bench" gen-source --classes medium-high --out "$work" > "$work/out" 2>&1; then
  grep -q "needs a build with CUDA" "$work/out" && { echo "skipped: no CUDA"; exit 77; }
  cat "$work/out"; exit 1
fi
grep -q "medium-high.cu: .* 319 rows .* 4 warps per 32 cells" "$work/out" ||
  { echo "FAIL: gen-source said: $(cat "$work/out")"; exit 1; }
grep -q "se_gen_step_0" "$work/medium-high.cu" || { echo "FAIL: no step kernel in the source"; exit 1; }
if "$bin/simengine-bench" gen-source --classes small-low --out "$work/none" 2> "$work/err"; then
  echo "FAIL: wrote into a missing directory"; exit 1
fi
grep -q "cannot write $work/none/small-low.cu: No such file or directory" "$work/err" || { echo "FAIL: $(cat "$work/err")"; exit 1; }
# a kernel of 2 warps with one barrier, and its SASS: line 3 shared, lines 5-7 warp 0 (phases 0
# and 1), lines 9-11 warp 1
cat > "$work/k.cu" <<'CU'
extern "C" __global__ void se_gen_step_0() {
  const int w = threadIdx.x >> 5;
  int a = 0;
  if (w == 0) {
  a = 1;
  SE_GEN_BAR(1, 64);
  a = 2;
  } else if (w == 1) {
  a = 3;
  SE_GEN_BAR(1, 64);
  a = 4;
  }
}
CU
{
  echo "	.section	.text.se_gen_step_0,\"ax\",@progbits"
  for spec in 3:2 5:3 7:1 9:1 11:4 13:1; do
    echo "	//## File \"k.cu\", line ${spec%:*}"
    for k in $(seq "${spec#*:}"); do echo "        /*00${k}0*/                   NOP ;"; done
  done
  echo "//--------------------- .text.other"
  echo "        /*0000*/                   NOP ;"
} > "$work/k.sass"
python3 "$src/tools/gen_phases.py" "$work/k.cu" "$work/k.sass" > "$work/phases"
grep -q "phase 0: most      3, average      2.0, per warp \[3, 1\]" "$work/phases" &&
  grep -q "phase 1: most      4, average      2.5, per warp \[1, 4\]" "$work/phases" &&
  grep -q "critical path 10 instructions (3 shared by all warps), total 12, 2 warps, 2 phases" \
    "$work/phases" || { echo "FAIL: gen_phases.py said: $(cat "$work/phases")"; exit 1; }
echo "	.section	.text.other" > "$work/empty.sass"
if python3 "$src/tools/gen_phases.py" "$work/k.cu" "$work/empty.sass" 2> "$work/err"; then
  echo "FAIL: accepted a listing without the kernel"; exit 1
fi
grep -q "empty.sass: no instructions of a se_gen_step_ kernel" "$work/err" ||
  { echo "FAIL: $(cat "$work/err")"; exit 1; }
if command -v nvcc > /dev/null && command -v nvdisasm > /dev/null; then
  nvcc -cubin -lineinfo -arch=sm_90 --fmad=false --std=c++17 -I"$src/src" "$work/medium-high.cu" \
    -o "$work/mh.cubin" 2> /dev/null
  nvdisasm -g "$work/mh.cubin" > "$work/mh.sass"
  python3 "$src/tools/gen_phases.py" "$work/medium-high.cu" "$work/mh.sass" |
    grep -q "4 warps, 3 phases" || { echo "FAIL: the real SASS"; exit 1; }
  echo "ok: the real SASS of medium-high read"
else
  echo "(nvcc or nvdisasm not installed: the real SASS not read)"
fi
echo "ok: gen-source wrote and refused, gen_phases.py counted and refused"
echo "1 passed, 0 failed"
