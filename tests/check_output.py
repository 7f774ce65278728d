#!/usr/bin/env python3
"""Checks that simengine output files follow the SONATA layout of DESIGN.md Section 3 and
docs/output.md:

  /report/<population>/data                      float32 or float64 [frames x E], units "mV"
  /report/<population>/mapping/node_ids          uint64 [Nr]
  /report/<population>/mapping/index_pointers    uint64 [Nr+1], 0 .. E, non-decreasing
  /report/<population>/mapping/element_ids       uint32 [E]
  /report/<population>/mapping/time              float64 [3] (start, stop, step), units "ms",
                                                 (stop - start) / step == frames
  /spikes/<population>/timestamps, node_ids      float64, uint64 [n], units "ms", sorted by time
                                                 (ties by node id); group attribute `sorting`:
                                                 uint8 enum {none 0, by_id 1, by_time 2} = by_time
  /simengine                                     group (run metadata)

Usage: check_output.py FILE [FILE ...] [--population NAME]
Without --population every population under /report is checked. Prints one line per file and
exits with status 1 (after listing every deviation) when a file does not conform.
"""
import argparse
import sys

import h5py
import numpy as np

ROWS_PER_READ_BYTES = 64 << 20  # data is checked for finite values in blocks of this size
SORTING = {"none": 0, "by_id": 1, "by_time": 2}


def as_str(value):
    """An attribute value as str (h5py gives str for variable-length strings, bytes for fixed)."""
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.shape in ((), (1,)):
        return as_str(value.reshape(-1)[0])
    return value if isinstance(value, str) else None


class Checker:
    """Collects the deviations of one file."""

    def __init__(self, path):
        self.path = path
        self.problems = []

    def fail(self, where, message):
        self.problems.append(f"{self.path}: {where}: {message}")

    def dataset(self, f, where, dtype, ndim):
        """The dataset at where if it exists with the given dtype (numpy notation, or a tuple
        of them) and number of dimensions, else None (the deviation is recorded)."""
        obj = f.get(where)
        if not isinstance(obj, h5py.Dataset):
            self.fail(where, "missing dataset" if obj is None else "is not a dataset")
            return None
        allowed = dtype if isinstance(dtype, tuple) else (dtype,)
        if obj.dtype.str not in allowed:
            self.fail(where, f"dtype {obj.dtype.str} ({obj.dtype}), expected "
                             + " or ".join(f"{np.dtype(d).str} ({np.dtype(d)})" for d in allowed))
            return None
        if obj.ndim != ndim:
            self.fail(where, f"{obj.ndim} dimensions {obj.shape}, expected {ndim}")
            return None
        return obj

    def units(self, obj, expected):
        if obj is None:
            return
        if "units" not in obj.attrs:
            self.fail(obj.name, f"no `units` attribute (expected '{expected}')")
            return
        value = as_str(obj.attrs["units"])
        if value != expected:
            self.fail(obj.name, f"units = {obj.attrs['units']!r}, expected '{expected}'")

    def report(self, f, pop):
        base = f"/report/{pop}"
        data = self.dataset(f, f"{base}/data", ("<f4", "<f8"), 2)
        self.units(data, "mV")
        node_ids = self.dataset(f, f"{base}/mapping/node_ids", "<u8", 1)
        pointers = self.dataset(f, f"{base}/mapping/index_pointers", "<u8", 1)
        element_ids = self.dataset(f, f"{base}/mapping/element_ids", "<u4", 1)
        time = self.dataset(f, f"{base}/mapping/time", "<f8", 1)
        self.units(time, "ms")
        if data is None:
            return None
        frames, columns = data.shape
        if pointers is not None and node_ids is not None:
            ip = pointers[()]
            if ip.shape[0] != node_ids.shape[0] + 1:
                self.fail(pointers.name, f"{ip.shape[0]} entries for {node_ids.shape[0]} "
                                         f"node_ids, expected {node_ids.shape[0] + 1}")
            elif ip[0] != 0 or ip[-1] != columns:
                self.fail(pointers.name, f"runs from {ip[0]} to {ip[-1]}, expected 0 to "
                                         f"{columns} (the columns of data)")
            elif np.any(np.diff(ip.astype(np.int64)) < 0):
                k = int(np.argmax(np.diff(ip.astype(np.int64)) < 0))
                self.fail(pointers.name, f"decreases at entry {k}: {ip[k]} > {ip[k + 1]}")
        if element_ids is not None and element_ids.shape[0] != columns:
            self.fail(element_ids.name, f"{element_ids.shape[0]} entries for {columns} columns "
                                        "of data")
        if time is not None:
            t = time[()]
            if t.shape != (3,):
                self.fail(time.name, f"shape {t.shape}, expected (3,) = start, stop, step")
            elif not np.all(np.isfinite(t)) or not t[2] > 0 or t[1] < t[0]:
                self.fail(time.name, f"(start, stop, step) = {tuple(t)}: expected finite values, "
                                     "step > 0, stop >= start")
            elif abs((t[1] - t[0]) / t[2] - frames) >= 0.5:
                self.fail(time.name, f"(stop - start) / step = {(t[1] - t[0]) / t[2]:g} frames "
                                     f"but data has {frames} rows (stop is exclusive)")
        rows = max(1, ROWS_PER_READ_BYTES // max(1, columns * data.dtype.itemsize))
        for r0 in range(0, frames if columns else 0, rows):
            block = data[r0:r0 + rows]
            bad = np.argwhere(~np.isfinite(block))
            if bad.size:
                r, c = bad[0]
                last = r0 + len(block) - 1
                self.fail(data.name, f"non-finite value {block[r, c]} at frame {r0 + r}, column "
                                     f"{c} ({len(bad)} such values in frames {r0}..{last})")
                break
        return frames, columns, 0 if node_ids is None else node_ids.shape[0]

    def spikes(self, f, pop):
        base = f"/spikes/{pop}"
        group = f.get(base)
        if not isinstance(group, h5py.Group):
            self.fail(base, "missing group")
            return None
        if "sorting" not in group.attrs:
            self.fail(base, "no `sorting` attribute")
        else:
            attr = group.attrs.get_id("sorting")
            enum = h5py.check_enum_dtype(attr.dtype)
            if enum is None or attr.dtype.kind != "u" or attr.dtype.itemsize != 1:
                self.fail(base, f"`sorting` has type {attr.dtype}, expected a uint8 enum")
            elif dict(enum) != SORTING:
                self.fail(base, f"`sorting` enum members {dict(enum)}, expected {SORTING}")
            elif int(group.attrs["sorting"]) != SORTING["by_time"]:
                self.fail(base, f"sorting = {int(group.attrs['sorting'])}, expected by_time (2)")
        ts = self.dataset(f, f"{base}/timestamps", "<f8", 1)
        self.units(ts, "ms")
        ids = self.dataset(f, f"{base}/node_ids", "<u8", 1)
        if ts is None or ids is None:
            return None
        t, g = ts[()], ids[()]
        if t.shape != g.shape:
            self.fail(base, f"{t.shape[0]} timestamps but {g.shape[0]} node_ids")
            return None
        if not np.all(np.isfinite(t)):
            self.fail(ts.name, f"non-finite time at index {int(np.argmax(~np.isfinite(t)))}")
        elif t.size > 1:
            dt = np.diff(t)
            same = (dt == 0) & (g[1:] < g[:-1])
            if np.any(dt < 0):
                k = int(np.argmax(dt < 0))
                self.fail(ts.name, f"not sorted by time: t[{k}] = {t[k]} > t[{k + 1}] = {t[k + 1]}")
            elif np.any(same):
                k = int(np.argmax(same))
                self.fail(ids.name, f"equal times not sorted by node id: at index {k}, "
                                    f"node {g[k]} before {g[k + 1]} at t = {t[k]}")
        return t.size


def check_file(path, population):
    """Returns (problems, summary) for one file."""
    chk = Checker(path)
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        return [f"{path}: cannot open: {e}"], ""
    with f:
        if not isinstance(f.get("/simengine"), h5py.Group):
            chk.fail("/simengine", "missing group (run metadata)")
        if population:
            pops = [population]
        elif isinstance(f.get("/report"), h5py.Group) and len(f["/report"]):
            pops = sorted(f["/report"].keys())
        else:
            chk.fail("/report", "missing group or no population in it")
            pops = []
        summary = []
        for pop in pops:
            if not isinstance(f.get(f"/report/{pop}"), h5py.Group):
                chk.fail(f"/report/{pop}", "missing group")
                continue
            shape = chk.report(f, pop)
            n_spikes = chk.spikes(f, pop)
            if shape is not None:
                summary.append(f"{pop}: {shape[0]} frames x {shape[1]} columns of {shape[2]} "
                               f"cells, {n_spikes if n_spikes is not None else '?'} spikes")
    return chk.problems, "; ".join(summary)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", metavar="FILE", help="simengine output file (HDF5)")
    parser.add_argument("--population", help="population to check (default: every one under "
                                              "/report)")
    args = parser.parse_args(argv)
    failed = 0
    for path in args.files:
        problems, summary = check_file(path, args.population)
        if problems:
            failed += 1
            for p in problems:
                print(f"ERROR {p}", file=sys.stderr)
            print(f"FAIL {path}: {len(problems)} deviation(s) from the SONATA output layout")
        else:
            print(f"OK {path}: {summary}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
