#!/usr/bin/env python3
"""Plots the spike raster of a simengine output file (/spikes/<population>/{timestamps,
node_ids}, docs/output.md): one dot per spike, time against node id.

Usage: plot_raster.py FILE [--population NAME] -o raster.png
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sonata_common import open_output, pick_populations  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Plot the spike raster of a simengine output file.")
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--population", help="population under /spikes (default: every one)")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    args = parser.parse_args(argv)

    with open_output(args.file) as f:
        pops = pick_populations(f, "/spikes", args.population)
        fig, ax = plt.subplots(figsize=(9, 4.5))
        total = 0
        for pop in pops:
            t = f[f"/spikes/{pop}/timestamps"][()]
            gid = f[f"/spikes/{pop}/node_ids"][()]
            total += t.size
            ax.scatter(t, gid, s=6, marker="|" if t.size > 2000 else "o", label=f"{pop} ({t.size})")
        if total == 0:
            ax.text(0.5, 0.5, "no spikes", transform=ax.transAxes, ha="center", va="center")
        elif len(pops) > 1:
            ax.legend(fontsize=8, loc="best")
        # the whole simulated time, not only the span of the spikes
        tstop = f["/simengine"].attrs.get("tstop") if "/simengine" in f else None
        if tstop is not None:
            ax.set_xlim(0.0, float(tstop))
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("node id (gid)")
        ax.set_title(f"{args.file}: {total} spikes", fontsize=9)
        fig.tight_layout()
        fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}: {total} spikes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
