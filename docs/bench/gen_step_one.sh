# Sourced by the device scripts that compare gen's settings (s15_sweep.sh, s16_levels.sh):
# one CLASSES [VAR=VALUE ...] appends to $S gen's step on CLASSES (comma-separated) at 256 000
# cells, 10 steps, with the given environment and SE_GEN_VERBOSE=1, under a header line naming
# them; six [VAR=VALUE ...] prints gen's step on the six classes and the six together at 256 000
# cells with the given environment (s19_final.sh, s20_first.sh); ncu_step SECONDS CLASS OUT
# writes to OUT Nsight Compute's warp states, scheduler, occupancy, memory workload and speed of
# light for one launch of gen's step kernel on CLASS at 256 000 cells (s15_ncu.sh, s22_first.sh).
one() {
  local classes=$1; shift
  echo "== $classes: ${*:-defaults} (at ${SECONDS}s)" >> $S
  env "$@" SE_GEN_VERBOSE=1 timeout 60 build-dev/src/simengine-bench step --classes $classes \
    --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
}
six() {
  env "$@" SE_GEN_VERBOSE=1 timeout 90 build-dev/src/simengine-bench step --six 256000 \
    --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen
}
ncu_step() {
  timeout $1 ncu --clock-control none --kernel-name regex:se_gen_step --launch-skip 2 \
    --launch-count 1 --section WarpStateStats --section SchedulerStats --section Occupancy \
    --section MemoryWorkloadAnalysis --section SpeedOfLight --section LaunchStats \
    build-dev/src/simengine-bench step --classes $2 --neurons 256000 --steps 4 --cpu 0 \
    --mixed 0 --huge-swc "" --only gen > $3 2>&1
}
