#!/usr/bin/env python3
"""Plots the spike raster of a simengine output file (/spikes/<population>/{timestamps,
node_ids}, docs/output.md): one dot per spike, time against node id.

Usage: plot_raster.py FILE [--population NAME] -o raster.png
"""
import argparse
import sys

import matplotlib

matplotlib.use("Agg")
import h5py  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Plot the spike raster of a simengine output file.")
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--population", help="population under /spikes (default: every one)")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    args = parser.parse_args(argv)

    try:
        f = h5py.File(args.file, "r")
    except OSError as e:
        sys.exit(f"error: cannot open {args.file}: {e}")
    with f:
        if "/spikes" not in f:
            sys.exit(f"error: {args.file} has no /spikes group")
        pops = [args.population] if args.population else sorted(f["/spikes"].keys())
        fig, ax = plt.subplots(figsize=(9, 4.5))
        total = 0
        for pop in pops:
            if pop not in f["/spikes"]:
                sys.exit(f"error: no population '{pop}' under /spikes")
            t = f[f"/spikes/{pop}/timestamps"][()]
            gid = f[f"/spikes/{pop}/node_ids"][()]
            total += t.size
            ax.scatter(t, gid, s=6, marker="|" if t.size > 2000 else "o", label=f"{pop} ({t.size})")
        if total == 0:
            ax.text(0.5, 0.5, "no spikes", transform=ax.transAxes, ha="center", va="center")
        elif len(pops) > 1:
            ax.legend(fontsize=8, loc="best")
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("node id (gid)")
        ax.set_title(f"{args.file}: {total} spikes", fontsize=9)
        fig.tight_layout()
        fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}: {total} spikes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
