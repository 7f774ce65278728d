#!/usr/bin/env python3
"""Plots `simengine-bench step --csv` results: one group of bars per class, one bar per backend
(and per file when several are given), as times the step's byte floor with the floor (1x) and
the issue's target (1.5x) drawn, or as ns per compartment-step (docs/performance.md).

Usage: plot_step.py CSV [CSV ...] [--label NAME ...] [--metric floor|ns] -o step.png
  --label   one name per CSV, put before its backends (default: none with one file, else the
            file names)
  --metric  floor: times the byte floor (needs the GPU's copy bandwidth, measured by the bench
            only with a GPU); ns: ns per compartment-step. Default: floor when every row has it.
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

COLUMNS = ("class", "backend", "ns_per_comp_step", "copy_GBps", "times_floor")


def read_rows(path):
    """The rows of one CSV as dicts; exits with the file and the missing column named."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"error: cannot read {path}: {e.strerror}")
    if not rows:
        sys.exit(f"error: {path}: no rows (expected the CSV of simengine-bench step --csv)")
    for c in COLUMNS:
        if c not in rows[0]:
            sys.exit(f"error: {path}: no column '{c}' (expected the CSV of simengine-bench step "
                     "--csv)")
    for k, r in enumerate(rows, start=2):
        for c in ("ns_per_comp_step", "copy_GBps", "times_floor"):
            try:
                r[c] = float(r[c])
            except ValueError:
                sys.exit(f"error: {path}, line {k}: column '{c}' is '{r[c]}', not a number")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description="Plot simengine-bench step results.")
    parser.add_argument("csv", nargs="+", metavar="CSV")
    parser.add_argument("--label", nargs="+", help="one name per CSV")
    parser.add_argument("--metric", choices=("floor", "ns"), help="default: floor when measured")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    a = parser.parse_args(argv)
    if a.label and len(a.label) != len(a.csv):
        sys.exit(f"error: {len(a.label)} labels for {len(a.csv)} CSV files")
    labels = a.label or ([""] if len(a.csv) == 1 else [os.path.basename(p) for p in a.csv])
    series, classes = {}, []  # series name -> {class: value}
    have_floor = True
    rows_all = []
    for path, label in zip(a.csv, labels):
        for r in read_rows(path):
            name = (label + ": " if label else "") + r["backend"]
            rows_all.append((name, r))
            have_floor &= r["copy_GBps"] > 0 and r["times_floor"] > 0
            if r["class"] not in classes:
                classes.append(r["class"])
    metric = a.metric or ("floor" if have_floor else "ns")
    if metric == "floor" and not have_floor:
        sys.exit("error: --metric floor: some rows have no copy bandwidth (the bench measures it "
                 "only with a GPU); use --metric ns")
    for name, r in rows_all:
        series.setdefault(name, {})[r["class"]] = (r["times_floor"] if metric == "floor"
                                                   else r["ns_per_comp_step"])
    x = np.arange(len(classes))
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(classes) + 2), 4.2))
    for k, (name, values) in enumerate(series.items()):
        heights = [values.get(c, np.nan) for c in classes]
        bars = ax.bar(x - 0.4 + (k + 0.5) * width, heights, width, label=name)
        ax.bar_label(bars, fmt="%.2f" if metric == "floor" else "%.3g", fontsize=7, padding=1)
    if metric == "floor":
        ax.axhline(1.0, color="black", linewidth=0.8, label="byte floor")
        ax.axhline(1.5, color="red", linestyle="--", linewidth=0.8, label="target 1.5x")
        ax.set_ylabel("time per compartment-step / byte floor")
    else:
        ax.set_ylabel("ns per compartment-step")
    ax.set_xticks(x, classes)
    ax.set_title("Full HH time step (simengine-bench step)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.output, dpi=120)
    print(f"wrote {a.output}: {len(classes)} classes, {len(series)} series, metric {metric}")


if __name__ == "__main__":
    main()
