#!/bin/bash
# Session 15, fourth device call (about 7-8 minutes): e2e_gpu
# (every GPU run of simengine against the CPU path through the HDF5 output; the first run with
# session 15's gen defaults), then the GPU-vs-CPU row with gen: 25 600 medium-high cells on the
# CPU (16 OpenMP threads), fused2 and gen, as session 14's 98x.
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s15_e2e.sh
TAG=s15 bash docs/bench/s14_third.sh
