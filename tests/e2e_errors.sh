#!/usr/bin/env bash
# End to end: bad invocations and bad inputs give a clear message naming the file, a non-zero exit,
# and leave no output behind (neither the final name nor the .tmp).
set -uo pipefail
bin="$SE_BUILD_DIR/src"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib_expect.sh"
mpi() { "$MPIEXEC" --oversubscribe -n "$1" "$bin/simengine" "${@:2}"; }

expect "help" 0 "Usage: mpirun -np N simengine" -- "$bin/simengine" --help
expect "no input" 2 "no input file" -- mpi 1
expect "unknown option" 2 "unknown option '--bogus'" -- mpi 1 --bogus x.h5
expect "bad layout" 2 "--layout 'diagonal'" -- mpi 1 --layout diagonal x.h5
# bounded before the casts to int: 100000 threads crashed the OpenMP runtime (signal 11)
expect "threads beyond 1024" 2 "--threads '100000': expected an integer from 1 to 1024" -- mpi 1 --threads 100000 x.h5
expect "width wrapping round" 2 "--width '99999999999': expected an integer from 1 to 64" -- mpi 1 --width 99999999999 x.h5
expect "missing file (2 ranks)" 1 "$work/missing.h5" -- mpi 2 "$work/missing.h5" -o "$work/o1.h5"
echo "this is not HDF5" > "$work/text.h5"
expect "not HDF5 (3 ranks)" 1 "text.h5.*(not an HDF5|HDF5)" -- mpi 3 "$work/text.h5" -o "$work/o2.h5"
"$bin/simengine-prep" neurons -o "$work/ok.h5" --class small-low:2 --tstop 1 >/dev/null
expect "gpus in a CPU-only version" 1 "--gpus 1" -- mpi 1 "$work/ok.h5" --gpus 1 -o "$work/o3.h5"
expect "output directory missing" 1 "nonexistent" -- mpi 2 "$work/ok.h5" -o "$work/nonexistent/out.h5"
# An SWC type code sizes prep's biophysics table: 2147483647 overflowed it (exit 2, no file named).
printf '1 1 0 0 0 5 -1\n2 2147483647 0 0 10 1 1\n' > "$work/type.swc"
expect "SWC type beyond the region codes" 1 "type.swc line 2: type 2147483647 is not a region code" -- \
  "$bin/simengine-prep" neurons --swc "$work/type.swc" -o "$work/o4.h5"
# Finite but absurd biophysics pass the contract and fail in the step: the message names the input.
"$bin/simengine-prep" neurons -o "$work/ek.h5" --class small-low:2 --tstop 1 --set all:ek=-1e300 >/dev/null
expect "numerical failure names the input" 1 "voltage of cell [0-9]+ became .*check the biophysics \\(input $work/ek.h5\\)" -- \
  mpi 2 "$work/ek.h5" -o "$work/o5.h5"
# A finite v_init beyond float's range was written as inf into the float32 report with exit 0.
"$bin/simengine-prep" neurons -o "$work/vi.h5" --class small-low:2 --tstop 1 --v-init 1e300 >/dev/null
expect "recorded value beyond float32" 1 "recorded value 1e\\+300 .*does not fit the float32 report data.*\\(input $work/vi.h5\\)" -- \
  mpi 2 "$work/vi.h5" -o "$work/o6.h5"
for o in o1 o2 o3 o4 o5 o6; do
  if [ -e "$work/$o.h5" ] || [ -e "$work/$o.h5.tmp" ]; then fail=$((fail+1)); echo "FAIL: $o output left behind"; fi
done
expect_summary
