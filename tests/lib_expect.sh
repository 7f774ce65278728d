# Shared by the end-to-end shell tests (source it after `set -uo pipefail`): counts checks in
# pass/fail; expect runs a command and checks its exit status and output; expect_summary prints
# the counts and returns non-zero when a check failed.
pass=0; fail=0
expect() { # expect NAME EXPECTED_EXIT REGEX -- command...
  local name=$1 code=$2 regex=$3; shift 4
  local out; out=$("$@" 2>&1); local rc=$?
  if [ "$rc" -eq "$code" ] && grep -Eq -- "$regex" <<<"$out"; then pass=$((pass+1)); echo "ok: $name"
  else fail=$((fail+1)); echo "FAIL: $name: exit $rc (expected $code), output:"; echo "$out" | head -5; fi
}
expect_summary() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
