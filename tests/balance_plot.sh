#!/usr/bin/env bash
# tools/plot_balance.py on the history of a balanced run (2 ranks x 2 CPU workers): it must write
# a PNG for one rank, for both ranks in --share mode, and refuse a rank that does not exist and a
# file without /simengine/balance. Skips (exit 77) without h5py and matplotlib.
set -euo pipefail
bin="$SE_BUILD_DIR/src"; src="$SE_SOURCE_DIR"
python3 -c "import h5py, matplotlib" 2>/dev/null || { echo "skipped: no h5py or matplotlib"; exit 77; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$bin/simengine-prep" neurons -o "$work/in.h5" --class small-high:6 --class medium-low:4 \
  --iclamp-all 1:10:0.5 --tstop 10 >/dev/null
"$MPIEXEC" --oversubscribe -n 2 "$bin/simengine" -q "$work/in.h5" -o "$work/out.h5" \
  --cpu-workers 2 --balance rate --balance-steps 25
python3 "$src/tools/plot_balance.py" "$work/out.h5" -o "$work/one.png"
python3 "$src/tools/plot_balance.py" "$work/out.h5" --ranks 0 1 --share -o "$work/both.png"
for png in one both; do
  [ "$(head -c 8 "$work/$png.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] \
    || { echo "FAIL: $png.png is not a PNG"; exit 1; }
done
if python3 "$src/tools/plot_balance.py" "$work/out.h5" --ranks 5 -o "$work/bad.png" 2>"$work/err"; then
  echo "FAIL: rank 5 of 2 accepted"; exit 1
fi
grep -q "rank 5 is not in 0..1" "$work/err" || { echo "FAIL: message: $(cat "$work/err")"; exit 1; }
if python3 "$src/tools/plot_balance.py" "$work/in.h5" -o "$work/bad.png" 2>"$work/err"; then
  echo "FAIL: a file without history accepted"; exit 1
fi
grep -q "no /simengine/balance" "$work/err" || { echo "FAIL: message: $(cat "$work/err")"; exit 1; }
echo "ok: plot_balance.py wrote one.png and both.png, refused a bad rank and a file without history"
echo "1 passed, 0 failed"
