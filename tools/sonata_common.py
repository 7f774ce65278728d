"""Helpers shared by the plotting tools (plot_raster.py, plot_traces.py, plot_balance.py): opening
a simengine output file (docs/output.md) and choosing the populations to plot under /spikes or
/report."""
import sys

import h5py


def open_output(path):
    """The HDF5 file at path, opened read-only; exits with a message when it cannot be opened."""
    try:
        return h5py.File(path, "r")
    except OSError as e:
        sys.exit(f"error: cannot open {path}: {e}")


def pick_populations(f, group, name=None, only_one=False):
    """The populations under group ("/spikes", "/report") to plot: [name] when a name is given,
    else every one, or with only_one the only one. Exits with a message when none fits."""
    have = sorted(f[group].keys()) if group in f else []
    if name:
        if name not in have:
            sys.exit(f"error: no population '{name}' under {group} (have: {', '.join(have)})")
        return [name]
    if not have:
        sys.exit(f"error: {f.filename} has no population under {group}")
    if only_one and len(have) != 1:
        sys.exit(f"error: choose a population with --population (have: {', '.join(have)})")
    return have
