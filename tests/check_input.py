#!/usr/bin/env python3
"""The neurons input file seen from h5py (docs/input-neurons.md).

usage: check_input.py <test_input program> <work dir>

1. A file written by se_input_write_neurons opens with h5py and has the dtypes of the contract.
2. The reference model written by hand with h5py's defaults (int64 integers, variable-length str
   attributes) reads back equal to the reference model in C.
3. The h5py example of docs/input-neurons.md makes a file the reader accepts.
Exits 77 (skip) when h5py is missing.
"""
import os
import re
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"skipping: {e}")
    sys.exit(77)

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}")


def little_endian(dt):
    return dt.byteorder == "<" or (dt.byteorder == "=" and sys.byteorder == "little") or dt.byteorder == "|"


def check_dataset(f, path, kind, size=None):
    expect(path in f, f"{path} missing")
    if path not in f:
        return
    d = f[path]
    expect(d.dtype == np.dtype(kind), f"{path} has dtype {d.dtype}, expected {kind}")
    expect(little_endian(d.dtype), f"{path} is not little-endian")
    expect(d.ndim == 1, f"{path} has shape {d.shape}")
    if size is not None:
        expect(d.shape == (size,), f"{path} has shape {d.shape}, expected ({size},)")


def check_written(program, work):
    path = os.path.join(work, "input_py_written.h5")
    subprocess.run([program, "write", path], check=True)
    with h5py.File(path, "r") as f:
        a = f.attrs
        expect(isinstance(a["format"], str) and a["format"] == "simengine-input", f"format {a['format']!r}")
        expect(isinstance(a["workload"], str) and a["workload"] == "neurons", f"workload {a['workload']!r}")
        expect(np.issubdtype(np.asarray(a["version"]).dtype, np.integer) and a["version"] == 1,
               f"version {a['version']!r}")
        for name in ("dt", "tstop", "v_init", "celsius", "spike_threshold"):
            expect(np.asarray(f["run"].attrs[name]).dtype == np.float64, f"/run attribute {name}")
        expect(f["run"].attrs["dt"] == 0.025, "dt value")
        m = len(f["morphologies/offsets"]) - 1
        c = len(f["morphologies/parent"])
        check_dataset(f, "morphologies/offsets", "<i8", m + 1)
        check_dataset(f, "morphologies/parent", "<i4", c)
        check_dataset(f, "morphologies/length", "<f8", c)
        check_dataset(f, "morphologies/diameter", "<f8", c)
        check_dataset(f, "morphologies/region", "<i4", c)
        expect(f["morphologies/offsets"][-1] == c, "offsets end at C")
        n = len(f["cells/morphology"])
        check_dataset(f, "cells/morphology", "<i4", n)
        check_dataset(f, "cells/gid", "<u8", n)
        pop = f["cells/gid"].attrs["population"]
        expect(isinstance(pop, str) and pop == "cortex", f"population {pop!r}")
        r = int(f["morphologies/region"][:].max()) + 1
        for name in ("cm", "ra", "g_pas", "e_pas", "gnabar_hh", "gkbar_hh", "gl_hh", "el_hh", "ena", "ek"):
            check_dataset(f, f"biophysics/{name}", "<f8", r)
        s = len(f["stimuli/iclamp/cell"])
        check_dataset(f, "stimuli/iclamp/cell", "<i8", s)
        check_dataset(f, "stimuli/iclamp/compartment", "<i4", s)
        for name in ("delay", "duration", "amplitude"):
            check_dataset(f, f"stimuli/iclamp/{name}", "<f8", s)
        ra = f["record"].attrs
        expect(np.issubdtype(np.asarray(ra["every"]).dtype, np.integer) and ra["every"] == 4, "every")
        expect(isinstance(ra["compartments"], str) and ra["compartments"] == "all", "compartments")
        expect(isinstance(ra["dtype"], str) and ra["dtype"] == "float64", "dtype")
        check_dataset(f, "record/cells", "<i8")
        expect(list(f["record/cells"][:]) == [0, 2], "record cells")
    expect(not os.path.exists(path + ".tmp"), "temporary file left behind")


def write_reference_by_hand(path):
    """The reference model of tests/test_input.c, with h5py's default types."""
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "simengine-input"
        f.attrs["version"] = 1
        f.attrs["workload"] = "neurons"
        run = f.create_group("run")
        run.attrs["dt"] = 0.025
        run.attrs["tstop"] = 10.0 / 3.0
        run.attrs["v_init"] = -64.5
        run.attrs["celsius"] = 20.0
        run.attrs["spike_threshold"] = -1.0 / 3.0
        f["morphologies/offsets"] = [0, 4, 7]
        f["morphologies/parent"] = [-1, 0, 1, 1, -1, 0, 0]
        f["morphologies/length"] = [20.0 / 3.0, 100.0, 1.0 / 7.0, 55.5, 12.0, 1e-3, 300.25]
        f["morphologies/diameter"] = [20.0, 2.0 / 3.0, 0.5, 1.25, 15.0, 3.0, 0.1]
        f["morphologies/region"] = [1, 3, 3, 4, 1, 2, 2]
        f["cells/morphology"] = [0, 1, 0]
        f["cells/gid"] = np.array([10, 20, 2**64 - 1], dtype=np.uint64)
        f["cells/gid"].attrs["population"] = "cortex"
        bio = {
            "cm": [1.0, 1.0, 1.5, 2.0, 0.75],
            "ra": [35.4, 100.0, 150.0, 200.0, 1.0 / 3.0],
            "g_pas": [0.0, 0.0, 1e-4, 3e-5, 2e-4],
            "e_pas": [-70.0, -65.0, -70.5, -71.0, -72.0],
            "gnabar_hh": [0.0, 0.12, 0.0, 0.0, 0.0],
            "gkbar_hh": [0.0, 0.036, 0.0, 0.0, 0.0],
            "gl_hh": [0.0, 0.0003, 0.0, 0.0, 0.0],
            "el_hh": [-54.3, -54.3, -54.3, -54.3, -50.0],
            "ena": [50.0, 55.0, 50.0, 50.0, 50.0],
            "ek": [-77.0, -80.0, -77.0, -77.0, -77.0],
        }
        for name, values in bio.items():
            f[f"biophysics/{name}"] = values
        f["stimuli/iclamp/cell"] = [0, 2]
        f["stimuli/iclamp/compartment"] = [0, 3]
        f["stimuli/iclamp/delay"] = [1.0, 2.0 / 3.0]
        f["stimuli/iclamp/duration"] = [5.0, 0.0]
        f["stimuli/iclamp/amplitude"] = [0.1, -0.05]
        rec = f.create_group("record")
        rec.attrs["every"] = 4
        rec.attrs["compartments"] = "all"
        rec.attrs["dtype"] = "float64"
        rec["cells"] = [2, 0]  # unsorted on purpose: the reader sorts it


def docs_example(source_dir):
    """The first python code block of docs/input-neurons.md."""
    with open(os.path.join(source_dir, "docs", "input-neurons.md")) as f:
        text = f.read()
    m = re.search(r"```python\n(.*?)```", text, re.S)
    return m.group(1) if m else None


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    program, work = sys.argv[1], sys.argv[2]
    check_written(program, work)

    path = os.path.join(work, "input_py_by_hand.h5")
    write_reference_by_hand(path)
    r = subprocess.run([program, "check", path])
    expect(r.returncode == 0, "the file written by hand with h5py does not read back as the reference")

    source_dir = os.environ.get("SE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
    code = docs_example(source_dir)
    expect(code is not None, "no python example in docs/input-neurons.md")
    if code is not None:
        subprocess.run([sys.executable, "-c", code], cwd=work, check=True)
        r = subprocess.run([program, "read", os.path.join(work, "example.h5")])
        expect(r.returncode == 0, "the example of docs/input-neurons.md is refused by the reader")

    print(f"check_input.py: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
