# Sourced by the device scripts that compare gen's settings (s15_sweep.sh, s16_levels.sh):
# one CLASSES [VAR=VALUE ...] appends to $S gen's step on CLASSES (comma-separated) at 256 000
# cells, 10 steps, with the given environment and SE_GEN_VERBOSE=1, under a header line naming
# them.
one() {
  local classes=$1; shift
  echo "== $classes: ${*:-defaults} (at ${SECONDS}s)" >> $S
  env "$@" SE_GEN_VERBOSE=1 timeout 60 build-dev/src/simengine-bench step --classes $classes \
    --neurons 256000 --steps 10 --cpu 0 --mixed 0 --huge-swc "" --only gen >> $S 2>&1
}
