#!/usr/bin/env bash
# The unknown ordering in the tdbem run (src/tdbem_run.c, docs/tdbem.md Section 10): a small
# double-precision sphere (N 200) marched with simengine --ordering original, morton and hilbert
# on 1, 2 and 3 ranks gives the same /tdbem/state (original numbering) within 1e-12 relative; the
# curves score more than the original numbering (the score line of rank 0 and the /simengine
# attributes); morton on a file without /tdbem/positions fails naming the dataset, and a bad
# --ordering is a usage error (status 2).
set -euo pipefail
bin="$SE_BUILD_DIR/src"
python3 -c "import h5py, numpy" 2>/dev/null || { echo "SKIP: python3 with h5py and numpy needed"; exit 77; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
run() { "$MPIEXEC" --oversubscribe -n "$1" "$bin/simengine" "${@:2}"; }

"$bin/simengine-prep" tdbem --n 200 --kmax 30 --dmax 6 --mean-length 4 --steps 41 \
  --precision double --seed 3 -o "$work/sphere.h5" >/dev/null

for ordering in original morton hilbert; do
  for ranks in 1 2 3; do
    run "$ranks" "$work/sphere.h5" --ng 3 --ordering "$ordering" -o "$work/${ordering}_r$ranks.h5" \
      >"$work/${ordering}_r$ranks.log"
    grep -q "unknown ordering $ordering: quality score" "$work/${ordering}_r$ranks.log" ||
      { echo "FAIL: no quality score line for $ordering on $ranks ranks"; cat "$work/${ordering}_r$ranks.log"; exit 1; }
  done
done
grep "quality score" "$work/hilbert_r1.log" "$work/morton_r1.log"

python3 - "$work" <<'PY'
import sys, h5py, numpy as np
work = sys.argv[1]
with h5py.File(f"{work}/original_r1.h5") as f:
    ref = f["/tdbem/state"][:]
scale = np.abs(ref).max()
assert ref.shape == (41, 200) and ref.dtype == np.float64 and scale > 0, (ref.shape, ref.dtype, scale)
quality = {}
for ordering in ("original", "morton", "hilbert"):
    for ranks in (1, 2, 3):
        with h5py.File(f"{work}/{ordering}_r{ranks}.h5") as f:
            a = f["/tdbem/state"][:]
            attrs = f["/simengine"].attrs
            name = attrs["unknown_ordering"]
            name = name.decode() if isinstance(name, bytes) else str(name)
            assert name == ordering, (name, ordering)
            quality[ordering] = (float(attrs["ordering_quality"]), float(attrs["ordering_quality_original"]))
        rel = np.abs(a - ref).max() / scale
        print(f"ok: {ordering} on {ranks} rank(s): max |a - a_ref| / max |a_ref| = {rel:.2e}")
        if not rel <= 1e-12:
            sys.exit(f"FAIL: {ordering} on {ranks} ranks differs from original on 1 rank by {rel:.2e}")
orig = quality["original"][0]
for ordering in ("morton", "hilbert"):
    q, q0 = quality[ordering]
    assert abs(q0 - orig) < 1e-12, (ordering, q0, orig)
    if not q > 2 * orig:
        sys.exit(f"FAIL: {ordering} scores {q:.2f}, not above twice the original {orig:.2f}")
print("ok: scores", {k: round(v[0], 2) for k, v in quality.items()})
with h5py.File(f"{work}/sphere.h5", "a") as f:
    del f["/tdbem/positions"]
PY

if run 2 "$work/sphere.h5" --ordering morton -o "$work/never.h5" >"$work/nopos.log" 2>&1; then
  echo "FAIL: morton without /tdbem/positions succeeded"; exit 1
fi
grep -q "/tdbem/positions" "$work/nopos.log" || { echo "FAIL: the error does not name /tdbem/positions"; cat "$work/nopos.log"; exit 1; }
[ ! -e "$work/never.h5" ] && [ ! -e "$work/never.h5.tmp" ] || { echo "FAIL: output left behind"; exit 1; }
echo "ok: $(grep -o 'the morton ordering needs.*' "$work/nopos.log" | head -1)"
run 1 "$work/sphere.h5" -o "$work/plain.h5" >/dev/null || { echo "FAIL: original without positions failed"; exit 1; }
status=0; run 1 "$work/sphere.h5" --ordering peano -o "$work/never.h5" >/dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || { echo "FAIL: --ordering peano exited with $status, expected 2"; exit 1; }
echo "ok: --ordering peano is a usage error"
