#!/usr/bin/env bash
# tools/plot_step.py: on the committed H200 table (times the byte floor, two backends) and on a
# fresh `simengine-bench step --csv` of this machine (CPU rows only: no copy bandwidth, so ns per
# compartment-step), two files with labels; it must write PNGs, and refuse a CSV without the
# bench's columns (naming the file and the column), a non-number, --metric floor without a copy
# bandwidth, and labels that do not match the files. Skips (exit 77) without matplotlib.
set -euo pipefail
bin="$SE_BUILD_DIR/src"; src="$SE_SOURCE_DIR"
python3 -c "import matplotlib, numpy" 2>/dev/null || { echo "skipped: no matplotlib"; exit 77; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
plot() { python3 "$src/tools/plot_step.py" "$@"; }
is_png() { [ "$(head -c 8 "$1" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ]; }
h200="$src/docs/bench/s11_final_step_h200.csv"
plot "$h200" -o "$work/h200.png" | grep -q "6 classes, 2 series, metric floor"
"$bin/simengine-bench" step --classes small-low,small-high --neurons 16 --steps 1 --mixed 0 \
  --huge-swc "" --csv "$work/cpu.csv" > /dev/null
plot "$work/cpu.csv" -o "$work/cpu.png" | grep -q "2 classes, 1 series, metric ns"
plot "$h200" "$work/cpu.csv" --label h200 here --metric ns -o "$work/both.png" |
  grep -q "6 classes, 3 series, metric ns"
for png in h200 cpu both; do is_png "$work/$png.png" || { echo "FAIL: $png.png is not a PNG"; exit 1; }; done
refuse() { # refuse MESSAGE ARGS...: the plot must fail with MESSAGE
  local msg=$1; shift
  if plot "$@" -o "$work/bad.png" 2> "$work/err"; then echo "FAIL: accepted: $*"; exit 1; fi
  grep -q -- "$msg" "$work/err" || { echo "FAIL: message for $*: $(cat "$work/err")"; exit 1; }
}
printf 'class,backend\nsmall-low,cpu\n' > "$work/cols.csv"
refuse "cols.csv: no column 'ns_per_comp_step'" "$work/cols.csv"
sed '3s/,4241.8,/,fast,/' "$h200" > "$work/nan.csv"
refuse "nan.csv, line 3: column 'copy_GBps' is 'fast'" "$work/nan.csv"
refuse "some rows have no copy bandwidth" "$work/cpu.csv" --metric floor
refuse "2 labels for 1 CSV files" "$h200" --label a b
echo "ok: plot_step.py wrote three PNGs and refused four bad inputs"
echo "1 passed, 0 failed"
