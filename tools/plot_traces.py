#!/usr/bin/env python3
"""Plots the recorded voltage traces of a few cells of a simengine output file (SONATA report,
docs/output.md): one line per cell, time axis from /report/<population>/mapping/time.

Usage: plot_traces.py FILE [--population NAME] [--cells GID ...] [--compartment K] -o traces.png
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sonata_common import open_output, pick_populations  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Plot voltage traces from a simengine output file.")
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--population", help="population under /report (default: the only one)")
    parser.add_argument("--cells", nargs="+", type=int, metavar="GID",
                        help="node ids (gids) of the cells to plot (default: the first five "
                             "recorded)")
    parser.add_argument("--compartment", type=int, default=None,
                        help="element (compartment) id to plot in each cell (default: the cell's "
                             "first recorded column, the soma when it is recorded)")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    args = parser.parse_args(argv)

    with open_output(args.file) as f:
        pop = pick_populations(f, "/report", args.population, only_one=True)[0]
        base = f"/report/{pop}"
        data = f[f"{base}/data"]
        node_ids = f[f"{base}/mapping/node_ids"][()]
        pointers = f[f"{base}/mapping/index_pointers"][()]
        element_ids = f[f"{base}/mapping/element_ids"][()]
        start, _, step = f[f"{base}/mapping/time"][()]
        t = start + step * np.arange(data.shape[0])  # frame k is at start + k * step
        units = data.attrs.get("units", "mV")
        units = units.decode() if isinstance(units, bytes) else units

        gids = args.cells if args.cells else [int(g) for g in node_ids[:5]]
        fig, ax = plt.subplots(figsize=(9, 4.5))
        for gid in gids:
            where = np.flatnonzero(node_ids == gid)
            if where.size == 0:
                sys.exit(f"error: gid {gid} is not recorded in {base}")
            c = int(where[0])
            cols = np.arange(int(pointers[c]), int(pointers[c + 1]))
            if args.compartment is not None:
                cols = cols[element_ids[cols] == args.compartment]
            if cols.size == 0:
                which = "" if args.compartment is None else f" for compartment {args.compartment}"
                sys.exit(f"error: gid {gid} has no recorded column{which}")
            col = int(cols[0])
            ax.plot(t, data[:, col], lw=1, label=f"gid {gid}, compartment {element_ids[col]}")
        ax.set_xlabel("time (ms)")
        ax.set_ylabel(f"membrane voltage ({units})")
        ax.set_title(f"{args.file}: {pop}", fontsize=9)
        if gids:
            ax.legend(fontsize=8, loc="best")
        fig.tight_layout()
        fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}: {len(gids)} traces of {data.shape[0]} frames")
    return 0


if __name__ == "__main__":
    sys.exit(main())
