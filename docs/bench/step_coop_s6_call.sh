#!/bin/bash
# Device call of the coop step, session 6 (helper A): the cleaned kernel (the paths of
# SE_COOP_STAGE, _VWIDE, _STATE_L2 and _STAGE_EV removed) and the temporary switch
# SE_COOP_STAGE_HH (phase 1a's records and its rows' state staged through shared memory where the
# hh area keeps the warps per multiprocessor; docs/gpu.md "coop", the staged hh paragraph).
# The switch was measured, rejected and removed after this call: to run it again, apply
# docs/bench/step_coop_s6_stage_hh_rejected.patch to commit 4c9e685 first.
# From the repository root on the device (run tool, carry .devkit), one H200, warm machine:
#   bash docs/bench/step_coop_s6_call.sh
# Build; engine_stream with SE_COOP_STAGE_HH=0 and =1 (the two runs side by side: each is
# single-threaded on the host, OMP_NUM_THREADS=1 under ctest); the 256 000-cell step bench of the
# six classes, fused2 once and coop with SE_COOP_STAGE_HH=0 (A) and =1 (B) as A B A B; e2e_gpu's
# coop runs (defaults) if time is left. Each stage only while time is left (BUDGET seconds in
# all, default 232). Outputs under $OUT: step_coop_s6_{build,tests,bench,e2e}.txt; a summary on
# stdout.
set -o pipefail
T0=$SECONDS; BUDGET=${BUDGET:-232}
left() { echo $((BUDGET - SECONDS + T0)); }
stamp() { echo "[$((SECONDS - T0)) s] $*"; }
source .devkit/env.sh; export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

tools/device/build.sh test_stream simengine simengine-prep simengine-bench compare_outputs \
  > $OUT/step_coop_s6_build.txt 2>&1
rc=$?
grep -v tdbem_kernels $OUT/step_coop_s6_build.txt | head -20
[ $rc -eq 0 ] || { stamp "build failed"; exit 1; }
stamp "built"

# engine_stream, SE_COOP_STAGE_HH=0 and =1 side by side
t=$(( $(left) - 75 )); [ $t -gt 90 ] && t=90; [ $t -lt 30 ] && t=30
for hh in 0 1; do
  (cd build-dev && SE_COOP_STAGE_HH=$hh timeout $t ctest -R engine_stream --output-on-failure -V) \
    > $OUT/tests_hh$hh.txt 2>&1 &
done
wait
for hh in 0 1; do
  echo "==== engine_stream, SE_COOP_STAGE_HH=$hh"
  cat $OUT/tests_hh$hh.txt
  # the summary: checks, pass or fail, every failed check, the coop kernel's runs against the CPU
  { grep -hE "test_stream: [0-9]+ checks|Test +#[0-9]+: engine_stream|FAIL " $OUT/tests_hh$hh.txt
    grep -hE "GPU coop" $OUT/tests_hh$hh.txt | grep -oE "hh staged [^)]*\)|max \|dv\| [^,]*" |
      paste -d' ' - - | sort | uniq -c; } | sed "s/^/SE_COOP_STAGE_HH=$hh: /" | cut -c1-160 >&2
done > $OUT/step_coop_s6_tests.txt
rm -f $OUT/tests_hh0.txt $OUT/tests_hh1.txt
stamp "tests done"

# the step bench: fused2 once, coop A B A B
B=build-dev/src/simengine-bench
bench() { # label, SE_COOP_STAGE_HH, the bench's --only
  local t=$(( $(left) - 25 ))  # a run takes about 15 s; e2e_gpu's about 20 s come after
  [ $t -gt 15 ] || { echo "== $1: no time left"; return; }
  [ $t -gt 75 ] && t=75
  echo "== $1"
  SE_COOP_VERBOSE=1 SE_COOP_STAGE_HH=$2 timeout $t $B step --neurons 256000 --steps 10 --cpu 0 \
    --mixed 0 --huge-swc "" --only $3 2>&1 | grep -E "coop|fused2|bandwidth"
}
{ bench "A1 SE_COOP_STAGE_HH=0" 0 fused2,coop
  bench "B1 SE_COOP_STAGE_HH=1" 1 coop
  bench "A2 SE_COOP_STAGE_HH=0" 0 coop
  bench "B2 SE_COOP_STAGE_HH=1" 1 coop
} > $OUT/step_coop_s6_bench.txt 2>&1
stamp "bench done"
# summary: ns per compartment-step (times the floor) per class and run; "hh" = phase 1a staged
awk '
  /^== /{run=$2; next}
  /phase 1a and its state/{staged=($NF=="yes") ? "hh" : "--"; next}
  /cuda (fused2|coop)/{
    k=($5=="fused2") ? "fused2" : run; cls[$1]=1; v[$1,k]=sprintf("%.4f (%s)", $7, $9)
    if (k!="fused2") st[$1,k]=staged
    if (k ~ /^A/) {sa[$1]+=$7; na[$1]++} else if (k ~ /^B/) {sb[$1]+=$7; nb[$1]++}
  }
  /bandwidth/{print}
  END{
    printf "%-12s %-16s %-18s %-18s %-18s %-18s %s\n", "class", "fused2", "A1 hh=0", "B1 hh=1",
           "A2 hh=0", "B2 hh=1", "B/A"
    n=split("small-low small-high medium-low medium-high big-low big-high", c, " ")
    for (i=1; i<=n; i++) if (c[i] in cls) {
      printf "%-12s %-16s", c[i], v[c[i],"fused2"]
      split("A1 B1 A2 B2", r, " ")
      for (q=1; q<=4; q++) printf " %-18s", v[c[i],r[q]] " " st[c[i],r[q]]
      if (na[c[i]] && nb[c[i]]) printf " %.3f", (sb[c[i]]/nb[c[i]])/(sa[c[i]]/na[c[i]])
      printf "\n"
    }
  }' $OUT/step_coop_s6_bench.txt

# e2e_gpu's coop runs with the defaults (SE_COOP_STAGE_HH unset: off), if time is left
if [ $(left) -gt 28 ]; then
  (cd build-dev && SE_E2E_GPU_RUNS="coop coop2r" timeout $(( $(left) - 3 )) \
     ctest -R e2e_gpu --output-on-failure -V) > $OUT/step_coop_s6_e2e.txt 2>&1
  grep -E "max|Passed|Failed|Timeout" $OUT/step_coop_s6_e2e.txt | tail -6 | cut -c1-200
else
  echo "e2e_gpu: no time left"
fi
stamp "done"
