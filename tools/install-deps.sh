#!/usr/bin/env bash
# Installs what simengine needs on a Debian machine (apt-get), and the Python packages used by the
# post-processing scripts and the output checks (numpy, h5py, matplotlib). Quick when all is there.
set -euo pipefail
pkgs="build-essential cmake pkg-config openmpi-bin libopenmpi-dev libhdf5-openmpi-dev hdf5-tools
      libmumps-ptscotch-dev libscotch-dev libptscotch-dev"
missing=""
for p in $pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "install-deps: apt-get install$missing"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
if ! python3 -c "import numpy, h5py, matplotlib" >/dev/null 2>&1; then
  echo "install-deps: pip install numpy h5py matplotlib"
  python3 -m pip install -q numpy h5py matplotlib
fi
# NEURON itself, for the optional cross-check (tests/crosscheck_neuron.py, docs/crosscheck.md);
# the cross-check skips when this fails.
if ! python3 -c "import neuron" >/dev/null 2>&1; then
  echo "install-deps: pip install neuron (optional cross-check)"
  python3 -m pip install -q neuron || echo "install-deps: NEURON not installed; the cross-check will be skipped"
fi
