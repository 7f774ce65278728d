#!/bin/bash
# Prepared in session 16 for the next session's first device call (about 8 minutes): e2e_gpu
# alone (not yet run with session 16's defaults: big-high's two levels of pieces, medium-low's
# prefetches; in session 16 it ran beside engine_stream and check.sh's 420 s ran out), then the
# GPU-vs-CPU row again (session 16's CPU run may have shared the cores with the killed tests).
# From the repository root on the device (run tool, carry .devkit): bash docs/bench/s17_e2e.sh
TAG=s17 bash docs/bench/s14_third.sh
