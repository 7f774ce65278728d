#!/usr/bin/env python3
"""Plots the balancing history of a simengine output file (/simengine/balance, docs/output.md,
docs/balance.md): for each chosen rank, the measured time of every worker per iteration (top)
and the size of every worker's interval of items per iteration (bottom), like paper 002, Fig. 15.

Usage: plot_balance.py FILE [--ranks 0 1 ...] [--share] -o balance.png
  --share   plot each worker's time as a percentage of the iteration's total over the workers,
            and its interval as a percentage of the rank's items (the paper's presentation)
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sonata_common import open_output  # noqa: E402


def read_history(f):
    """(first, last, time, names, attrs) of /simengine/balance; exits when the file has none."""
    if "/simengine/balance" not in f:
        sys.exit(f"error: {f.filename} has no /simengine/balance (written by simengine since "
                 "issue 5)")
    g = f["/simengine/balance"]
    names = [n.decode() if isinstance(n, bytes) else str(n) for n in g["workers"][()]]
    return g["first"][()], g["last"][()], g["time"][()], names, dict(g.attrs)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Plot the worker balancing history of a run.")
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--ranks", type=int, nargs="+", help="ranks to plot (default: rank 0)")
    parser.add_argument("--share", action="store_true",
                        help="percentages of the iteration's time and of the rank's items")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    args = parser.parse_args(argv)

    with open_output(args.file) as f:
        first, last, time, names, attrs = read_history(f)
    iters, ranks, _ = first.shape
    chosen = args.ranks if args.ranks else [0]
    for r in chosen:
        if not 0 <= r < ranks:
            sys.exit(f"error: rank {r} is not in 0..{ranks - 1}")
    items = attrs.get("items", "items")
    method = attrs.get("method", "?")
    steps = attrs.get("steps_per_iteration", "?")

    fig, axes = plt.subplots(2, len(chosen), figsize=(5.5 * len(chosen), 6.5), squeeze=False,
                             sharex=True)
    for col, r in enumerate(chosen):
        workers = [w for w in names[r].split(",") if w]
        # -1 marks iterations or workers the rank does not have; an empty interval has last =
        # first - 1
        size = np.where(first[:, r, :] >= 0, last[:, r, :] - first[:, r, :] + 1, np.nan)
        t = time[:, r, :]
        if args.share:
            total = np.nansum(t, axis=1, keepdims=True)
            t = 100.0 * t / np.where(total > 0, total, 1.0)
            n = np.nansum(size, axis=1, keepdims=True)
            size = 100.0 * size / np.where(n > 0, n, 1)
        x = np.arange(iters)
        for w, name in enumerate(workers):
            axes[0][col].plot(x, t[:, w], marker="o", ms=3, label=name)
            axes[1][col].plot(x, size[:, w], marker="o", ms=3, label=name)
        axes[0][col].set_title(f"rank {r}: {method}, {steps} steps per iteration", fontsize=9)
        axes[0][col].set_ylabel("time (% of the iteration)" if args.share else "time (s)")
        axes[1][col].set_ylabel(f"{items} (% of the rank)" if args.share else f"{items} per worker")
        axes[1][col].set_xlabel("iteration")
        axes[0][col].legend(fontsize=8, loc="best")
        if iters == 0:
            axes[0][col].text(0.5, 0.5, "no full iteration", transform=axes[0][col].transAxes,
                              ha="center", va="center")
    fig.suptitle(f"{args.file}: worker balance", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}: {iters} iterations, ranks {chosen}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
