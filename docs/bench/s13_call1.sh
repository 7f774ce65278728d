#!/bin/bash
# Session 13's first device call: the hh-row variants (docs/bench/s13_first.sh), then the
# warp-per-subtree Hines solve experiment (docs/bench/s12_wsolve.sh). About 7 minutes.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s13_call1.sh
bash docs/bench/s13_first.sh
bash docs/bench/s12_wsolve.sh
